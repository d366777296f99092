#![allow(clippy::unwrap_used, clippy::panic)]
use super::*;
