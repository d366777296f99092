//! Arrow conversions (in progress)
