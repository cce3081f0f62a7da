//! UTC timestamps in the one shape a2c writes: `YYYY-MM-DDTHH:MM:SSZ` (jiff does the calendar).

/// Now, as RFC 3339 UTC (`2026-11-29T16:04:23Z`).
pub fn now_rfc3339() -> String {
    rfc3339_after(0)
}

/// `YYYY-MM-DDTHH:MM:SSZ`, `seconds` from now (UTC), whole seconds.
pub fn rfc3339_after(seconds: i64) -> String {
    let now = jiff::Timestamp::now();
    let at = now.checked_add(jiff::SignedDuration::from_secs(seconds)).unwrap_or(now);
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shape_and_offsets() {
        let now = super::now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        let later = super::rfc3339_after(86_400 * 400);
        assert!(later > now, "{later} > {now}");
        let ts: jiff::Timestamp = later.parse().unwrap();
        let diff = ts.as_second() - now.parse::<jiff::Timestamp>().unwrap().as_second();
        assert!((86_400 * 400 - 2..=86_400 * 400 + 2).contains(&diff), "{diff}");
    }
}
