//! The port of a front in front of remote agents (`bridge`, `console`,
//! `mcp --listen`): bound first, then who may call decided for the address
//! it got, by `serve`'s authentication flags ([`crate::auth_args`]): API
//! keys or JWTs when configured, else everyone — but only on a loopback
//! address, unless `--allow-anonymous`.

use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use switchboard_server::{Anyone, Authenticator, Front};

use crate::auth_args::{self, AuthArgs};
use crate::limits_args::ConnectionArgs;

/// Binds `listen` and picks the authenticator `auth` asks for there.
pub async fn bind(
    listen: &str,
    auth: &AuthArgs,
) -> anyhow::Result<(Front, Arc<dyn Authenticator>)> {
    let front = Front::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let authenticator: Arc<dyn Authenticator> =
        match auth_args::caller_schemes(auth, front.local_addr().ip())? {
            Some(schemes) => Arc::new(schemes),
            None => Arc::new(Anyone),
        };
    Ok((front, authenticator))
}

/// Serves `router` on `front` under the connection limits `connections`
/// asks for, until Ctrl-C or SIGTERM.
pub async fn serve(
    front: Front,
    router: Router,
    connections: &ConnectionArgs,
) -> anyhow::Result<()> {
    front.serve(router, connections.connection_limits()).await?;
    Ok(())
}

/// A command line's tokens, as the fronts' `resolve` takes them.
#[cfg(test)]
pub(crate) fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(std::ffi::OsString::from).collect()
}
