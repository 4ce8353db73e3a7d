//! Query strings for the links pages print. Every value is
//! percent-encoded here; the template escapes the result again for HTML
//! (`&` becomes `&amp;`), which is what an attribute needs.

/// Percent-encodes one query component (RFC 3986 unreserved kept).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `path?k=v&…` from pairs, leaving out empty values.
pub fn query(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = String::from(path);
    let mut first = true;
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        out.push(if first { '?' } else { '&' });
        first = false;
        out.push_str(&encode(k));
        out.push('=');
        out.push_str(&encode(v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_and_empty_ones_left_out() {
        assert_eq!(encode("a b&c=é"), "a%20b%26c%3D%C3%A9");
        assert_eq!(
            query("/browse", &[("q", "<< 1 : 2 = *"), ("version", "")]),
            "/browse?q=%3C%3C%201%20%3A%202%20%3D%20%2A"
        );
        assert_eq!(query("/x", &[]), "/x");
    }
}
