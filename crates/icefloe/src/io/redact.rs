//! Scrubbing credentials out of messages. The object-store clients put request URLs and
//! response bodies into their errors; a SAS token travels in the URL, and a server may echo
//! a header. Every message built from a client error passes through [`Redactor::scrub`].

/// Query parameters whose values are credentials or signatures (SAS, presigned S3 URLs,
/// OAuth), scrubbed even when the value is not one of the configured secrets.
const SECRET_PARAMS: &[&str] = &[
    "sig=",
    "x-amz-signature=",
    "x-amz-security-token=",
    "x-amz-credential=",
    "access_token=",
    "accountkey=",
    "sharedaccesssignature=",
];

/// Replaces known secret values, and the values of signature-like query parameters, by `***`.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = Vec::new();
        for s in values {
            // A SAS token is also scrubbed part by part (a client may reorder or re-encode
            // its parameters); short parts like `sv=2024` are not secret and too common.
            for part in s.trim_start_matches('?').split('&') {
                let value = part.split_once('=').map_or(part, |(_, v)| v);
                if value.len() >= 8 && value != s {
                    secrets.push(value.to_string());
                    secrets.push(percent_encode(value));
                }
            }
            if s.len() >= 4 {
                secrets.push(percent_encode(&s));
                secrets.push(s);
            }
        }
        // longest first, so a secret that contains another is replaced whole
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    pub fn scrub(&self, message: &str) -> String {
        let mut out = message.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "***");
            }
        }
        scrub_params(&out)
    }
}

/// Percent-encodes the characters that URL query encoding changes in base64 and SAS values.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '+' => out.push_str("%2B"),
            '/' => out.push_str("%2F"),
            '=' => out.push_str("%3D"),
            ':' => out.push_str("%3A"),
            '&' => out.push_str("%26"),
            _ => out.push(c),
        }
    }
    out
}

/// Blanks the value of every `SECRET_PARAMS` parameter, up to the next `&`, space, quote or
/// bracket. ASCII case-insensitive; the message's other bytes are kept as they are.
fn scrub_params(message: &str) -> String {
    let lower = message.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for p in SECRET_PARAMS {
        let mut from = 0;
        while let Some(i) = lower[from..].find(p) {
            let start = from + i + p.len();
            let end = lower[start..]
                .find(|c: char| {
                    matches!(
                        c,
                        '&' | ' ' | '"' | '\'' | ')' | '>' | '<' | ';' | '\n' | ','
                    )
                })
                .map_or(lower.len(), |e| start + e);
            if end > start {
                cuts.push((start, end));
            }
            from = end.max(start);
        }
    }
    if cuts.is_empty() {
        return message.to_string();
    }
    cuts.sort_unstable();
    let mut out = String::with_capacity(message.len());
    let mut pos = 0;
    for (start, end) in cuts {
        if start < pos {
            continue;
        }
        out.push_str(&message[pos..start]);
        out.push_str("***");
        pos = end;
    }
    out.push_str(&message[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_secrets_and_signatures() {
        let r = Redactor::new([
            "wJalrXUtnFEMI/K7MDENG".to_string(),
            "sv=2024-01-01&sp=rw&sig=AbC%2Bdef123456".to_string(),
        ]);
        let m = r.scrub(
            "PUT http://h/c/x?sv=2024-01-01&sp=rw&sig=AbC%2Bdef123456 failed: key \
             wJalrXUtnFEMI%2FK7MDENG or wJalrXUtnFEMI/K7MDENG; X-Amz-Signature=abcdef",
        );
        assert!(!m.contains("AbC"), "{m}");
        assert!(!m.contains("wJalr"), "{m}");
        assert!(!m.contains("abcdef"), "{m}");
        assert!(m.starts_with("PUT http://h/c/x?"), "{m}");
        assert_eq!(
            Redactor::default().scrub("no secrets here"),
            "no secrets here"
        );
    }
}
