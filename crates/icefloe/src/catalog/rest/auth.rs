//! How requests authenticate, from the catalog's properties (Java's and PyIceberg's names):
//!
//! - `token`: a bearer token sent as `Authorization: Bearer <token>` on every request;
//! - `credential` (`<client_id>:<client_secret>`, or a secret alone): the OAuth2 client
//!   credentials grant, posted as a form to `oauth2-server-uri` (default
//!   `<uri>/v1/oauth/tokens`, the spec's deprecated endpoint that Java still defaults to)
//!   with `scope` (default `catalog`) and the optional `audience` and `resource`. The token
//!   is kept until shortly before its `expires_in` runs out, then fetched again; a 401 from
//!   the catalog also fetches a new one (once per request).
//!
//! A `token` wins over a `credential`. Tokens and secrets are [`Secret`]s: never printed.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::{encode, get};
use super::errors::protocol_error;
use crate::error::{Error, Result};
use crate::io::properties::Secret;

/// The default OAuth2 scope (Java's `OAuth2Properties.CATALOG_SCOPE`).
pub(super) const DEFAULT_SCOPE: &str = "catalog";

/// How long before its expiry a token is replaced: a tenth of its lifetime, at most this.
const MAX_REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// A token as fetched: it is replaced once `refresh_at` has passed (never, without
/// `expires_in`: then only a 401 replaces it).
#[derive(Debug, Clone)]
pub(super) struct CachedToken {
    pub token: Secret,
    pub refresh_at: Option<Instant>,
}

/// The OAuth2 client credentials flow.
#[derive(Debug)]
pub(super) struct OAuth2 {
    pub server_uri: String,
    client_id: Option<Secret>,
    client_secret: Secret,
    scope: String,
    audience: Option<String>,
    resource: Option<String>,
    cached: Mutex<Option<CachedToken>>,
}

/// The catalog's way of authenticating.
#[derive(Debug)]
pub(super) enum Auth {
    None,
    Token(Secret),
    OAuth2(OAuth2),
}

impl Auth {
    /// From the properties; `base_uri` (without a trailing `/`) gives the default token
    /// endpoint.
    pub(super) fn from_properties(properties: &[(String, String)], base_uri: &str) -> Result<Auth> {
        if let Some(token) = get(properties, "token").filter(|t| !t.is_empty()) {
            return Ok(Auth::Token(Secret::new(token)));
        }
        let Some(credential) = get(properties, "credential").filter(|c| !c.is_empty()) else {
            return Ok(Auth::None);
        };
        let (client_id, client_secret) = match credential.split_once(':') {
            Some((id, secret)) => (Some(Secret::new(id)), Secret::new(secret)),
            None => (None, Secret::new(credential)),
        };
        let server_uri = match get(properties, "oauth2-server-uri") {
            Some(u) if !u.is_empty() => u.to_string(),
            _ => format!("{base_uri}/v1/oauth/tokens"),
        };
        if !server_uri.starts_with("http://") && !server_uri.starts_with("https://") {
            return Err(Error::invalid_argument(format!(
                "oauth2-server-uri '{server_uri}' is not an http(s) URL"
            )));
        }
        Ok(Auth::OAuth2(OAuth2 {
            server_uri,
            client_id,
            client_secret,
            scope: get(properties, "scope")
                .unwrap_or(DEFAULT_SCOPE)
                .to_string(),
            audience: get(properties, "audience").map(str::to_string),
            resource: get(properties, "resource").map(str::to_string),
            cached: Mutex::new(None),
        }))
    }

    /// The values that must never appear in a message.
    pub(super) fn secrets(&self) -> Vec<String> {
        match self {
            Auth::None => Vec::new(),
            Auth::Token(t) => vec![t.expose().to_string()],
            Auth::OAuth2(o) => {
                let mut s = vec![o.client_secret.expose().to_string()];
                if let Some(id) = &o.client_id {
                    s.push(format!("{}:{}", id.expose(), o.client_secret.expose()));
                }
                if let Some(t) = o.current() {
                    s.push(t.token.expose().to_string());
                }
                s
            }
        }
    }
}

impl OAuth2 {
    /// The form body of a client credentials token request (`application/x-www-form-urlencoded`).
    pub(super) fn form(&self) -> String {
        let mut pairs: Vec<(&str, &str)> = vec![("grant_type", "client_credentials")];
        if let Some(id) = &self.client_id {
            pairs.push(("client_id", id.expose()));
        }
        pairs.push(("client_secret", self.client_secret.expose()));
        if !self.scope.is_empty() {
            pairs.push(("scope", &self.scope));
        }
        if let Some(a) = &self.audience {
            pairs.push(("audience", a));
        }
        if let Some(r) = &self.resource {
            pairs.push(("resource", r));
        }
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<CachedToken>> {
        // a panic while holding the lock leaves at worst no token: the next call fetches one
        self.cached.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached token, whether or not it is still fresh.
    pub(super) fn current(&self) -> Option<CachedToken> {
        self.lock().clone()
    }

    /// The cached token if it is not due for a refresh at `now`.
    pub(super) fn fresh(&self, now: Instant) -> Option<Secret> {
        self.lock()
            .as_ref()
            .filter(|t| t.refresh_at.is_none_or(|at| now < at))
            .map(|t| t.token.clone())
    }

    pub(super) fn store(&self, token: CachedToken) {
        *self.lock() = Some(token);
    }

    /// Forgets the token (the catalog answered 401 with it).
    pub(super) fn invalidate(&self) {
        *self.lock() = None;
    }
}

/// Reads a token endpoint's answer (`access_token`, `token_type`, `expires_in`), fetched at
/// `fetched_at`.
pub(super) fn parse_token_response(
    body: &[u8],
    shown: &str,
    fetched_at: Instant,
) -> Result<CachedToken> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| protocol_error(shown, "the token answer is not JSON"))?;
    let token = v
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| protocol_error(shown, "the token answer has no 'access_token'"))?;
    if let Some(kind) = v.get("token_type").and_then(Value::as_str) {
        // RFC 6749: case-insensitive; "N_A" is what token exchange answers
        if !kind.eq_ignore_ascii_case("bearer") && !kind.eq_ignore_ascii_case("n_a") {
            return Err(protocol_error(
                shown,
                &format!("token_type '{kind}' is not 'bearer'"),
            ));
        }
    }
    // a lifetime too long for the clock is a token that never needs a refresh
    let refresh_at = v
        .get("expires_in")
        .and_then(Value::as_u64)
        .and_then(|secs| {
            let lifetime = Duration::from_secs(secs);
            fetched_at.checked_add(lifetime - (lifetime / 10).min(MAX_REFRESH_MARGIN))
        });
    Ok(CachedToken {
        token: Secret::new(token),
        refresh_at,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::catalog::testing::props;

    #[test]
    fn token_wins_over_credential() {
        let a = Auth::from_properties(
            &props(&[("credential", "id:secret"), ("token", "tok")]),
            "http://h",
        )
        .unwrap();
        assert!(matches!(a, Auth::Token(t) if t.expose() == "tok"));
        assert!(matches!(
            Auth::from_properties(&[], "http://h").unwrap(),
            Auth::None
        ));
    }

    #[test]
    fn client_credentials_form_and_defaults() {
        let Auth::OAuth2(o) = Auth::from_properties(
            &props(&[("credential", "my id:s&cret=")]),
            "http://127.0.0.1:1/base",
        )
        .unwrap() else {
            panic!("not oauth2")
        };
        assert_eq!(o.server_uri, "http://127.0.0.1:1/base/v1/oauth/tokens");
        assert_eq!(
            o.form(),
            "grant_type=client_credentials&client_id=my%20id&client_secret=s%26cret%3D&scope=catalog"
        );
        let shown = format!("{o:?}");
        assert!(!shown.contains("s&cret"), "{shown}");
        // a secret alone, another endpoint and scope
        let Auth::OAuth2(o) = Auth::from_properties(
            &props(&[
                ("credential", "only-secret"),
                ("oauth2-server-uri", "https://idp/token"),
                ("scope", "PRINCIPAL_ROLE:ALL"),
            ]),
            "http://h",
        )
        .unwrap() else {
            panic!("not oauth2")
        };
        assert_eq!(o.server_uri, "https://idp/token");
        assert_eq!(
            o.form(),
            "grant_type=client_credentials&client_secret=only-secret&scope=PRINCIPAL_ROLE%3AALL"
        );
        assert!(Auth::from_properties(
            &props(&[("credential", "a:b"), ("oauth2-server-uri", "idp/token")]),
            "http://h"
        )
        .is_err());
    }

    #[test]
    fn tokens_are_refreshed_before_they_expire() {
        let t0 = Instant::now();
        let t = parse_token_response(
            br#"{"access_token":"abc","token_type":"Bearer","expires_in":100}"#,
            "POST /v1/oauth/tokens",
            t0,
        )
        .unwrap();
        assert_eq!(t.refresh_at, Some(t0 + Duration::from_secs(90)));
        let Auth::OAuth2(o) =
            Auth::from_properties(&props(&[("credential", "a:b")]), "http://h").unwrap()
        else {
            panic!("not oauth2")
        };
        assert!(o.fresh(t0).is_none());
        o.store(t);
        assert_eq!(o.fresh(t0).unwrap().expose(), "abc");
        assert!(o.fresh(t0 + Duration::from_secs(91)).is_none());
        o.invalidate();
        assert!(o.fresh(t0).is_none());
        for bad in [
            &br#"{"token_type":"bearer"}"#[..],
            br#"{"access_token":"x","token_type":"mac"}"#,
            b"<html>",
        ] {
            assert!(parse_token_response(bad, "POST x", t0).is_err());
        }
    }
}
