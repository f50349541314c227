//! What goes wrong with a PostgreSQL catalog, in words that name it: the URL with its
//! password masked, and for one tree the host and the tree's root.

use crate::pathtext::quote_env;

/// Errors of the PostgreSQL catalog. `catalog` is the URL as shown (password masked).
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL or the environment's settings cannot be used.
    #[error("catalog {catalog}: {cause}")]
    Settings { catalog: String, cause: String },
    /// No connection could be made (no server, refused, wrong password ...).
    #[error("cannot connect to catalog {catalog}: {cause}")]
    Connect { catalog: String, cause: String },
    /// A statement failed.
    #[error("catalog {catalog}: {cause}")]
    Query { catalog: String, cause: String },
    /// Nothing recorded for this tree (or no fixity tables at all).
    #[error(
        "no catalog for {host}:{} in {catalog} (run `fixity scan` first)",
        quote_env(.tree)
    )]
    NotFound { catalog: String, host: String, tree: Vec<u8> },
    /// The database's schema is from a newer fixity.
    #[error("catalog {catalog} has schema version {found}; this fixity knows up to {known}")]
    TooNew { catalog: String, found: i64, known: usize },
    /// The tree's records hold another algorithm's digests than the one asked for.
    #[error("catalog {catalog} holds {algo} digests for this tree; drop -a or pass -a {algo}")]
    AlgorithmMismatch { catalog: String, algo: &'static str },
    /// The tree's records name an algorithm this fixity does not have.
    #[error("catalog {catalog} uses unknown algorithm {algo:?}")]
    UnknownAlgorithm { catalog: String, algo: String },
    /// The server refused a statement for want of a privilege: a role of `fixity catalog
    /// init-roles` doing what its part does not allow (a host writing another host's
    /// tree, a monitor writing, a host migrating the schema).
    #[error("catalog {catalog}: role {role:?} may not {what}: {cause}; {advice}")]
    Refused { catalog: String, role: String, what: String, cause: String, advice: &'static str },
    /// A host's role asked for a tree of a host it is not mapped to (`fixity.host_roles`).
    #[error(
        "catalog {catalog}: role {role:?} may only read and write the trees of host{} {}, not \
         host {host:?}'s (the host is --host, else FIXITY_HOST, else this machine's name; use \
         {host:?}'s role, or have the catalog's owner map this role to it too: `fixity catalog \
         init-roles --host {role}={host}`)",
        if .hosts.len() == 1 { "" } else { "s" },
        .hosts.iter().map(|h| format!("{h:?}")).collect::<Vec<_>>().join(", ")
    )]
    OtherHost { catalog: String, role: String, hosts: Vec<String>, host: String },
    /// Another run holds the tree's run lock.
    #[error(
        "catalog {catalog} is busy for {host}:{}: another fixity run is using it (pass --wait \
         to queue)",
        quote_env(.tree)
    )]
    Busy { catalog: String, host: String, tree: Vec<u8> },
}

impl PgError {
    /// Whether the database has no record of the tree (nothing was scanned into it yet).
    pub fn is_not_found(&self) -> bool {
        matches!(self, PgError::NotFound { .. })
    }

    /// Whether the catalog's roles refused this (another host's tree, a write the role
    /// may not make).
    pub fn is_refused(&self) -> bool {
        matches!(self, PgError::Refused { .. } | PgError::OtherHost { .. })
    }
}

/// What to do about a refusal whose server message is `cause`.
pub(super) fn advice(cause: &str) -> &'static str {
    if cause.contains("row-level security") {
        "a host's role writes only the trees of the hosts fixity.host_roles maps it to: run \
         as that host's role, or ask the catalog's owner to map this role to the host \
         (`fixity catalog init-roles --host ROLE=HOST`)"
    } else if cause.contains("schema") || cause.contains("database") || cause.contains("owner") {
        "only the catalog's owner makes and migrates the schema: ask them to run `fixity \
         catalog init-roles` with this fixity (or one `fixity scan` as the owner), then run \
         again"
    } else {
        "this role's part does not allow it (a monitor's role only reads; a host's role \
         writes only its host's records): run it as the host's role, or ask the catalog's \
         owner to run `fixity catalog init-roles` for this role"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_what_to_do_after_what_the_server_said() {
        assert!(
            advice("new row violates row-level security policy for table \"trees\"")
                .contains("--host ROLE=HOST")
        );
        assert!(advice("permission denied for schema fixity").contains("owner makes and migrates"));
        assert!(advice("permission denied for database test_1").contains("owner makes"));
        assert!(advice("permission denied for table trees").contains("monitor's role only reads"));
        let e = PgError::Refused {
            catalog: "postgresql://mon@db/f".into(),
            role: "mon".into(),
            what: "add a tree of host \"a\"".into(),
            cause: "permission denied for table trees".into(),
            advice: advice("permission denied for table trees"),
        };
        assert!(e.to_string().starts_with(
            "catalog postgresql://mon@db/f: role \"mon\" may not add a tree of host \"a\": \
             permission denied for table trees; this role's part"
        ));
        let e = PgError::OtherHost {
            catalog: "c".into(),
            role: "web1".into(),
            hosts: vec!["a".into()],
            host: "b".into(),
        };
        assert!(
            e.to_string().starts_with(
                "catalog c: role \"web1\" may only read and write the trees of host \"a\", \
                 not host \"b\"'s"
            ),
            "{e}"
        );
    }
}
