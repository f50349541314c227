//! The monitoring arguments of `fixity status`: staleness, the Nagios/Icinga plugin mode
//! and Prometheus textfile metrics.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct HealthArgs {
    /// Warn (on stderr, and exit 1) when the last complete verification pass ended more
    /// than AGE ago (30d, 12h, 1w); with --nagios, the WARNING age [default: 7d].
    #[arg(long, value_name = "AGE")]
    pub max_age: Option<String>,
    /// Write Prometheus metrics (node_exporter's textfile format) to FILE.prom,
    /// atomically.
    #[arg(long, value_name = "FILE.prom")]
    pub metrics: Option<PathBuf>,
    /// Act as a Nagios/Icinga plugin: one status line with perfdata, exit 0 OK,
    /// 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
    #[arg(long, conflicts_with = "json")]
    pub nagios: bool,
    /// With --nagios: CRITICAL when the last complete pass is older than AGE
    /// [default: 30d].
    #[arg(long, value_name = "AGE", requires = "nagios")]
    pub critical_age: Option<String>,
    /// With --nagios: WARNING when there are more than N findings (corrupt, unreadable,
    /// missing) [default: 0].
    #[arg(long, value_name = "N", requires = "nagios")]
    pub warning_findings: Option<u64>,
    /// With --nagios: CRITICAL when there are more than N findings [default: off].
    #[arg(long, value_name = "N", requires = "nagios")]
    pub critical_findings: Option<u64>,
    /// With --nagios: CRITICAL when there are more than N corrupt files [default: 0].
    #[arg(long, value_name = "N", requires = "nagios")]
    pub critical_corrupt: Option<u64>,
}
