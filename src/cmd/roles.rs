//! `fixity catalog init-roles`: the SQL that keeps hosts to their own records, printed
//! for a DBA to review or run on the catalog.

use super::Status;
use crate::cli::InitRolesArgs;
use anyhow::{Context, bail};
use fixity::catalog::postgres::{RolePlan, apply_roles, init_roles_sql, mask};
use std::io::Write;

pub(super) fn init_roles(args: InitRolesArgs) -> anyhow::Result<Status> {
    let plan = RolePlan::new(&args.owner, &args.hosts, &args.monitors)?;
    if !args.apply {
        let sql = init_roles_sql(&plan);
        std::io::stdout().lock().write_all(sql.as_bytes()).context("write error")?;
        return Ok(Status::Ok);
    }
    let Some(catalog) = args.catalog.as_deref() else {
        bail!("--apply runs the SQL on a catalog: pass --catalog postgresql://ADMIN@HOST/DB");
    };
    let Some(url) = super::pg_url(catalog) else {
        bail!("init-roles sets up a PostgreSQL catalog: --catalog takes postgresql://...");
    };
    apply_roles(url, &plan)?;
    let mut out = format!("catalog {}: roles set up: owner {:?}", mask(url), plan.owner);
    for (role, host) in &plan.hosts {
        out.push_str(&format!("; host {host:?} as {role:?}"));
    }
    for m in &plan.monitors {
        out.push_str(&format!("; monitor {m:?}"));
    }
    out.push_str(" (the login roles have no password until one is set)\n");
    std::io::stdout().lock().write_all(out.as_bytes()).context("write error")?;
    Ok(Status::Ok)
}
