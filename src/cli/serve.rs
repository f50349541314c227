//! The arguments of `fixity serve` (a live web view of trees and fleets, with actions).

use super::FindArgs;
use clap::{Args, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on. Any address but loopback needs --users or
    /// --proxy-header: the server never answers the network without authentication.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8470")]
    pub listen: SocketAddr,
    /// The users file (`fixity serve --add-user NAME --users FILE` writes it): one user a
    /// line, `NAME ROLE ARGON2ID-HASH`. With it every page asks for a login.
    #[arg(long, value_name = "FILE")]
    pub users: Option<PathBuf>,
    /// Add a user to --users (or change its password and role) and exit: the password is
    /// read from the terminal twice (or once from standard input) and kept as an Argon2id
    /// hash.
    #[arg(long, value_name = "NAME", requires = "users")]
    pub add_user: Option<String>,
    /// With --add-user: what the user may do.
    #[arg(long, value_enum, default_value_t = Role::Viewer, requires = "add_user")]
    pub role: Role,
    /// With --add-user: take the password from this environment variable instead.
    #[arg(long, value_name = "VAR", requires = "add_user")]
    pub password_env: Option<String>,
    /// The certificate chain (PEM) to serve HTTPS with, by rustls.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Take the user's name from this request header (set by a reverse proxy that
    /// authenticated the user), only on connections from a --trusted-proxy address; the
    /// user's role comes from --users (a name not there is a viewer).
    #[arg(long, value_name = "HEADER", requires = "trusted_proxy")]
    pub proxy_header: Option<String>,
    /// An address the --proxy-header is believed from (repeat for each proxy).
    #[arg(long, value_name = "IP", requires = "proxy_header")]
    pub trusted_proxy: Vec<std::net::IpAddr>,
    /// Look, never act: no page offers an action and every action is refused.
    #[arg(long)]
    pub read_only: bool,
    /// The catalog: a PostgreSQL URL serves the whole fleet (every host's trees, or
    /// --host's); a catalog file serves the TREE given with it.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// With a PostgreSQL catalog: only this host's trees.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// The coverage window: a tree is judged by the share of its files verified within it
    /// and WARNING past it, as `status --nagios` judges [default: 7d].
    #[arg(long, value_name = "AGE")]
    pub max_age: Option<String>,
    /// How often the catalogs are looked at again (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub refresh: f64,
    #[command(flatten)]
    pub find: FindArgs,
    /// The trees to show (each found with its catalog as `status` finds it).
    #[arg(value_name = "TREE")]
    pub trees: Vec<PathBuf>,
}

/// What a user may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Role {
    /// Look at every page and the API.
    Viewer,
    /// Look and act: verify, repair, accept, forget.
    Operator,
}
