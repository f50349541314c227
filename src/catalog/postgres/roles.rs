//! Roles: hosts that cannot touch each other's records (`fixity catalog init-roles`).
//!
//! The SQL made here creates the login roles (an owner of the schema, one role per host,
//! monitors), two group roles (`fixity_hosts`, `fixity_monitors`) that carry the
//! privileges, the mapping `fixity.host_roles` (which role writes which host's trees),
//! and row-level security on `fixity.trees` and on every table of the schema with a
//! `tree` column: a host's role sees and changes only the trees of its hosts and their
//! rows; a monitor reads everything and writes nothing. The owner (and any superuser)
//! bypasses row-level security: it is the administrator's role, not a host's.
//!
//! The policies are made by one idempotent block ([`POLICIES`]) that finds the tables at
//! the time it runs; `schema::migrate` runs it again after its steps once roles are set
//! up, so tables of later migrations are covered as they appear.

use super::schema::{MIGRATIONS, SCHEMA_LOCK};
use super::{PgError, Target};
use postgres::Client;

/// The group role whose members are hosts' roles.
pub const HOSTS_GROUP: &str = "fixity_hosts";
/// The group role whose members are monitors' roles.
pub const MONITORS_GROUP: &str = "fixity_monitors";

/// Who is who in a catalog: what `fixity catalog init-roles` was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolePlan {
    /// The schema's owner: makes and migrates the schema; not subject to the policies.
    pub owner: String,
    /// (role, host): each role reads and writes the trees recorded under its host(s).
    pub hosts: Vec<(String, String)>,
    /// Roles that read every host's records and write nothing.
    pub monitors: Vec<String>,
}

/// Why a plan was refused (said as is: it names the argument).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(String);

/// PostgreSQL keeps at most this many bytes of a name (longer ones are cut silently).
const NAME_MAX: usize = 63;

fn check_role(what: &str, role: &str) -> Result<(), PlanError> {
    if role.is_empty() {
        return Err(PlanError(format!("{what}: a role needs a name")));
    }
    if role.len() > NAME_MAX {
        return Err(PlanError(format!(
            "{what}: role name {role:?} is longer than PostgreSQL's {NAME_MAX} bytes"
        )));
    }
    if role.contains('\0') {
        return Err(PlanError(format!("{what}: role name {role:?} holds a NUL")));
    }
    if role.starts_with("pg_") {
        return Err(PlanError(format!(
            "{what}: role names starting with pg_ are PostgreSQL's own ({role:?})"
        )));
    }
    if [HOSTS_GROUP, MONITORS_GROUP].contains(&role) {
        return Err(PlanError(format!(
            "{what}: {role} is the group role fixity makes; name the login role"
        )));
    }
    Ok(())
}

impl RolePlan {
    /// The plan of `--owner`, `--host ROLE=HOSTNAME` (each) and `--monitor`, checked:
    /// names PostgreSQL keeps as given, and no role in two parts (the owner is no host,
    /// no host a monitor).
    pub fn new(owner: &str, hosts: &[String], monitors: &[String]) -> Result<RolePlan, PlanError> {
        check_role("--owner", owner)?;
        let mut pairs = Vec::new();
        for h in hosts {
            let Some((role, host)) = h.split_once('=') else {
                return Err(PlanError(format!("--host {h:?}: give ROLE=HOSTNAME")));
            };
            check_role("--host", role)?;
            if host.is_empty() {
                return Err(PlanError(format!("--host {h:?}: give the host's name after =")));
            }
            if role == owner {
                return Err(PlanError(format!(
                    "--host {h:?}: {role:?} is the owner, who is not bound by the hosts' \
                     policies; give the host a role of its own"
                )));
            }
            if !pairs.contains(&(role.to_string(), host.to_string())) {
                pairs.push((role.to_string(), host.to_string()));
            }
        }
        let mut mons: Vec<String> = Vec::new();
        for m in monitors {
            check_role("--monitor", m)?;
            if m == owner || pairs.iter().any(|(r, _)| r == m) {
                return Err(PlanError(format!(
                    "--monitor {m:?}: that role is already the owner or a host's; a monitor \
                     needs a role of its own"
                )));
            }
            if !mons.contains(m) {
                mons.push(m.clone());
            }
        }
        Ok(RolePlan { owner: owner.to_string(), hosts: pairs, monitors: mons })
    }

    /// The login roles a host or monitor logs in as, each once.
    fn members(&self) -> Vec<&str> {
        let hosts = self.hosts.iter().map(|(r, _)| r.as_str());
        unique(hosts.chain(self.monitors.iter().map(String::as_str)))
    }
}

/// `name` as an SQL identifier: in double quotes, quotes doubled (quote_ident's form,
/// always quoted).
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as an SQL string literal (PQescapeLiteral's form: quotes doubled; with a
/// backslash, an E'' literal with backslashes doubled, whatever
/// standard_conforming_strings says).
pub(crate) fn literal(text: &str) -> String {
    let body = text.replace('\'', "''");
    match text.contains('\\') {
        true => format!("E'{}'", body.replace('\\', "\\\\")),
        false => format!("'{body}'"),
    }
}

/// The statement that creates `role` (LOGIN, or NOLOGIN for a group) when it is absent,
/// leaving an existing role as it is. No password: the DBA sets one, or certificate
/// authentication.
fn create_role(role: &str, login: bool) -> String {
    let kind = if login { "LOGIN" } else { "NOLOGIN" };
    format!(
        "DO $fixity$ BEGIN\n  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {}) THEN\n    \
         CREATE ROLE {} {kind};\n  END IF;\nEND $fixity$;\n",
        literal(role),
        ident(role)
    )
}

/// The block that brings the schema to this fixity's version, as `schema::migrate` does:
/// each step not yet taken, then the version recorded; a newer schema is refused.
fn migrations() -> String {
    let n = MIGRATIONS.len();
    let mut s = String::from(
        "DO $fixity$\nDECLARE v integer;\nBEGIN\n  SELECT coalesce((SELECT value::integer FROM \
         fixity.meta WHERE key = 'schema_version'), 0) INTO v;\n",
    );
    s.push_str(&format!(
        "  IF v > {n} THEN\n    RAISE EXCEPTION 'catalog has schema version %; this fixity \
         knows up to {n}', v;\n  END IF;\n"
    ));
    for (i, step) in MIGRATIONS.iter().enumerate() {
        s.push_str(&format!(
            "  IF v < {} THEN\n    EXECUTE $step${step}$step$;\n  END IF;\n",
            i + 1
        ));
    }
    s.push_str(&format!(
        "  INSERT INTO fixity.meta (key, value) VALUES ('schema_version', '{n}')\n    ON CONFLICT \
         (key) DO UPDATE SET value = EXCLUDED.value;\nEND $fixity$;\n"
    ));
    s
}

/// Grants, row-level security and policies, for the tables found when it runs: every
/// table of schema `fixity` gets its owner made the schema's owner; the groups get USAGE
/// on the schema, the monitors SELECT everywhere, the hosts SELECT on `meta` and
/// `host_roles` and SELECT, INSERT, UPDATE, DELETE on `trees` and each table with a
/// `tree` column, whose row-level security is enabled with a host's policy (`trees`: its
/// hosts' rows; the others: rows of the trees it sees) and a monitor's (read all).
/// Idempotent: policies are dropped and made again. Run by the schema's owner or a
/// superuser.
pub(crate) const POLICIES: &str = r#"DO $fixity$
DECLARE
  t record;
  owner name;
BEGIN
  SELECT r.rolname INTO owner FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner
   WHERE n.nspname = 'fixity';
  FOR t IN SELECT c.relname, pg_get_userbyid(c.relowner) AS relowner
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'fixity' AND c.relkind IN ('r', 'p') LOOP
    IF t.relowner <> owner THEN
      EXECUTE format('ALTER TABLE fixity.%I OWNER TO %I', t.relname, owner);
    END IF;
  END LOOP;
  REVOKE ALL ON SCHEMA fixity FROM PUBLIC;
  GRANT USAGE ON SCHEMA fixity TO fixity_hosts, fixity_monitors;
  GRANT SELECT ON ALL TABLES IN SCHEMA fixity TO fixity_monitors;
  GRANT SELECT ON fixity.meta, fixity.host_roles TO fixity_hosts;
  GRANT USAGE ON ALL SEQUENCES IN SCHEMA fixity TO fixity_hosts;
  FOR t IN SELECT c.relname
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'fixity' AND c.relkind IN ('r', 'p')
              AND (c.relname = 'trees' OR EXISTS (
                   SELECT 1 FROM pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'tree'
                      AND a.attnum > 0 AND NOT a.attisdropped))
            ORDER BY c.relname LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON fixity.%I TO fixity_hosts',
                   t.relname);
    EXECUTE format('ALTER TABLE fixity.%I ENABLE ROW LEVEL SECURITY', t.relname);
    EXECUTE format('DROP POLICY IF EXISTS fixity_host ON fixity.%I', t.relname);
    EXECUTE format('DROP POLICY IF EXISTS fixity_monitor ON fixity.%I', t.relname);
    IF t.relname = 'trees' THEN
      CREATE POLICY fixity_host ON fixity.trees TO fixity_hosts
        USING (host IN (SELECT h.host FROM fixity.host_roles h WHERE h.role = current_user))
        WITH CHECK (host IN (SELECT h.host FROM fixity.host_roles h
                              WHERE h.role = current_user));
    ELSE
      EXECUTE format('CREATE POLICY fixity_host ON fixity.%I TO fixity_hosts
                        USING (tree IN (SELECT id FROM fixity.trees))
                        WITH CHECK (tree IN (SELECT id FROM fixity.trees))', t.relname);
    END IF;
    EXECUTE format('CREATE POLICY fixity_monitor ON fixity.%I FOR SELECT TO fixity_monitors
                      USING (true)', t.relname);
  END LOOP;
END $fixity$;
"#;

/// The whole set-up as one transaction of SQL, for psql or for [`apply`]: the roles
/// (created when absent), the schema owned by the owner and migrated to this fixity's
/// version, the mapping of roles to hosts, and [`POLICIES`]. Running it again changes
/// nothing; running it with more hosts adds them.
pub fn init_roles_sql(plan: &RolePlan) -> String {
    let mut s = String::from(
        "-- fixity catalog init-roles: hosts that cannot touch each other's records.\n\
         -- Run as a superuser (psql -v ON_ERROR_STOP=1 -f FILE); running it again is harmless.\n\
         BEGIN;\n",
    );
    s.push_str("SET LOCAL client_min_messages = warning;\n");
    s.push_str(&format!(
        "DO $fixity$ BEGIN PERFORM pg_advisory_xact_lock({SCHEMA_LOCK}, 0); END $fixity$;\n"
    ));
    s.push_str("\n-- The roles: no password is set (ALTER ROLE ... PASSWORD, or certificates).\n");
    s.push_str(&create_role(&plan.owner, true));
    s.push_str(&create_role(HOSTS_GROUP, false));
    s.push_str(&create_role(MONITORS_GROUP, false));
    for r in plan.members() {
        s.push_str(&create_role(r, true));
    }
    for role in unique(plan.hosts.iter().map(|(r, _)| r.as_str())) {
        s.push_str(&format!("GRANT {HOSTS_GROUP} TO {};\n", ident(role)));
    }
    for m in &plan.monitors {
        s.push_str(&format!("GRANT {MONITORS_GROUP} TO {};\n", ident(m)));
    }
    // Row-level security does not bind these: refuse them rather than pretend.
    let bound: Vec<String> = plan.members().iter().map(|r| literal(r)).collect();
    if !bound.is_empty() {
        s.push_str(&format!(
            "DO $fixity$\nDECLARE r name;\nBEGIN\n  SELECT rolname INTO r FROM pg_roles\n   WHERE \
             rolname IN ({}) AND (rolsuper OR rolbypassrls) LIMIT 1;\n  IF r IS NOT NULL THEN\n    \
             RAISE EXCEPTION 'role % is a superuser or has BYPASSRLS: row-level security would \
             not bind it (ALTER ROLE % NOSUPERUSER NOBYPASSRLS)', r, r;\n  END IF;\nEND \
             $fixity$;\n",
            bound.join(", ")
        ));
    }
    s.push_str("\n-- The schema, owned by the owner, at this fixity's version.\n");
    s.push_str(&format!(
        "CREATE SCHEMA IF NOT EXISTS fixity AUTHORIZATION {owner};\nALTER SCHEMA fixity OWNER TO \
         {owner};\nCREATE TABLE IF NOT EXISTS fixity.meta (key text PRIMARY KEY, value text NOT \
         NULL);\n",
        owner = ident(&plan.owner)
    ));
    s.push_str(&migrations());
    s.push_str(
        "\n-- Which role reads and writes which host's trees.\n\
         CREATE TABLE IF NOT EXISTS fixity.host_roles (\n  role name NOT NULL,\n  host text NOT \
         NULL,\n  PRIMARY KEY (role, host)\n);\n",
    );
    for (role, host) in &plan.hosts {
        s.push_str(&format!(
            "INSERT INTO fixity.host_roles (role, host) VALUES ({}, {}) ON CONFLICT DO NOTHING;\n",
            literal(role),
            literal(host)
        ));
    }
    s.push_str("\n-- Grants, row-level security and policies on every table with a tree.\n");
    s.push_str(POLICIES);
    s.push_str("COMMIT;\n");
    s
}

/// Each item once, in first-seen order.
fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// Runs [`init_roles_sql`] on the catalog at `url` (connected as an administrator: a
/// superuser, who can create roles and hand the schema to the owner).
pub fn apply(url: &str, plan: &RolePlan) -> Result<(), PgError> {
    let t = Target::new(url)?;
    let mut client = t.connect()?;
    client
        .batch_execute(&init_roles_sql(plan))
        .map_err(|e| t.refusal(&e, "set up the catalog's roles (a superuser's work)"))
}

/// Whether roles are set up in this catalog (`fixity.host_roles` exists).
pub(super) fn set_up(client: &mut Client, t: &Target) -> Result<bool, PgError> {
    let sql = "SELECT to_regclass('fixity.host_roles') IS NOT NULL";
    let r = super::schema::one_text(client, sql).map_err(|e| t.query_error(&e))?;
    Ok(r.as_deref() == Some("t"))
}

/// Refuses, before anything is read or written, a host's role asking for the trees of a
/// host it is not mapped to: with row-level security such a tree would look absent (or
/// its row refused), which says nothing about why.
pub(super) fn check_host(client: &mut Client, t: &Target, host: &str) -> Result<(), PgError> {
    if !set_up(client, t)? {
        return Ok(());
    }
    let row = client
        .query_one(
            "SELECT current_user::text, coalesce(array_agg(host ORDER BY host), '{}')
               FROM fixity.host_roles WHERE role = current_user",
            &[],
        )
        .map_err(|e| t.refusal(&e, "read the catalog's roles (fixity.host_roles)"))?;
    let role: String = row.get(0);
    let hosts: Vec<String> = row.get(1);
    if hosts.is_empty() || hosts.iter().any(|h| h == host) {
        return Ok(());
    }
    Err(PgError::OtherHost { catalog: t.shown.clone(), role, hosts, host: host.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> RolePlan {
        RolePlan::new(
            "fixity_owner",
            &["web\"1=web1.example".into(), "o'brien=db'2\\x".into()],
            &["Nagios Check".into()],
        )
        .unwrap()
    }

    #[test]
    fn identifiers_are_quoted_as_quote_ident_does() {
        assert_eq!(ident("a"), "\"a\"");
        assert_eq!(ident("web\"1"), "\"web\"\"1\"");
        assert_eq!(ident("Nagios Check"), "\"Nagios Check\"");
        assert_eq!(ident("o'brien"), "\"o'brien\"");
    }

    #[test]
    fn literals_are_quoted_as_pq_escape_literal_does() {
        assert_eq!(literal("web1"), "'web1'");
        assert_eq!(literal("o'brien"), "'o''brien'");
        assert_eq!(literal("a\\b'c"), "E'a\\\\b''c'");
    }

    #[test]
    fn odd_role_names_are_quoted_everywhere_they_appear() {
        let sql = init_roles_sql(&plan());
        assert!(sql.contains("CREATE ROLE \"web\"\"1\" LOGIN;"), "{sql}");
        assert!(sql.contains("WHERE rolname = 'web\"1'"), "{sql}");
        assert!(sql.contains("GRANT fixity_hosts TO \"web\"\"1\";"), "{sql}");
        assert!(sql.contains("GRANT fixity_hosts TO \"o'brien\";"), "{sql}");
        assert!(sql.contains("CREATE ROLE \"o'brien\" LOGIN;"), "{sql}");
        assert!(sql.contains("WHERE rolname = 'o''brien'"), "{sql}");
        assert!(sql.contains("GRANT fixity_monitors TO \"Nagios Check\";"), "{sql}");
        assert!(sql.contains("VALUES ('o''brien', E'db''2\\\\x')"), "{sql}");
        assert!(sql.contains("AUTHORIZATION \"fixity_owner\""), "{sql}");
        // Nothing unquoted: every role name is in the SQL only quoted.
        assert!(!sql.contains(" o'brien "), "{sql}");
    }

    #[test]
    fn the_sql_is_one_transaction_with_every_migration_and_the_policies() {
        let sql = init_roles_sql(&plan());
        assert!(sql.starts_with("-- fixity catalog init-roles"));
        assert_eq!(sql.matches("BEGIN;\n").count(), 1);
        assert!(sql.ends_with("COMMIT;\n"));
        for (i, step) in MIGRATIONS.iter().enumerate() {
            assert!(!step.contains("$step$"), "step {} would end its quoting", i + 1);
            assert!(
                sql.contains(&format!("IF v < {} THEN\n    EXECUTE $step${step}$step$", i + 1))
            );
        }
        assert!(sql.contains(POLICIES));
        assert!(
            sql.find("CREATE TABLE IF NOT EXISTS fixity.host_roles").unwrap()
                < sql.find(POLICIES).unwrap()
        );
    }

    #[test]
    fn plans_are_checked() {
        let err = |o: &str, h: &[&str], m: &[&str]| {
            let h: Vec<String> = h.iter().map(|s| s.to_string()).collect();
            let m: Vec<String> = m.iter().map(|s| s.to_string()).collect();
            RolePlan::new(o, &h, &m).unwrap_err().to_string()
        };
        assert!(err("own", &["a"], &[]).contains("ROLE=HOSTNAME"));
        assert!(err("own", &["a="], &[]).contains("host's name"));
        assert!(err("own", &["own=h"], &[]).contains("is the owner"));
        assert!(err("own", &["a=h"], &["a"]).contains("a role of its own"));
        assert!(err("own", &[], &["own"]).contains("a role of its own"));
        assert!(err("", &[], &[]).contains("needs a name"));
        assert!(err(&"x".repeat(64), &[], &[]).contains("63 bytes"));
        assert!(err("own", &["pg_read_all_data=h"], &[]).contains("PostgreSQL's own"));
        assert!(err("own", &[], &["fixity_monitors"]).contains("group role"));
        // A host name may hold '=': the role is what comes before the first.
        let p =
            RolePlan::new("own", &["a=h=1".into(), "a=h=1".into(), "a=h2".into()], &[]).unwrap();
        assert_eq!(p.hosts, [("a".into(), "h=1".into()), ("a".into(), "h2".into())]);
        let sql = init_roles_sql(&p);
        assert_eq!(sql.matches("GRANT fixity_hosts TO \"a\";").count(), 1);
    }
}
