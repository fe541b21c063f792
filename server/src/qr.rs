//! `GET /qr.svg?text=<percent-encoded link>`: a table's link as a QR code the page shows, so
//! the organiser shares a table with a phone camera instead of reading its id aloud.
//!
//! The code is made by the `qrcode` crate's SVG renderer: medium error correction, a quiet zone
//! of 4 modules, black on white (phones scan it in dark mode too), and a `viewBox` only, so it
//! scales to whatever size the page gives it. Only an `http://` or `https://` link of at most
//! [`MAX_TEXT_BYTES`] bytes is drawn; the answer depends on the query alone.

use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// The longest text (decoded, in bytes) drawn as a QR code: a table link is under 100.
pub(crate) const MAX_TEXT_BYTES: usize = 512;

/// Why a `/qr.svg` request is refused: one line of plain text for the 400 answer.
pub(crate) type Refusal = &'static str;

/// The link a `/qr.svg` query asks for: the percent-decoded value of its one `text` parameter,
/// an `http://` or `https://` link of at most [`MAX_TEXT_BYTES`] bytes. Other parameters are
/// ignored; `+` stays a plus (a link holds no spaces to encode that way).
pub(crate) fn text_of(query: Option<&str>) -> Result<String, Refusal> {
    let mut found = None;
    for pair in query.unwrap_or("").split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if name != "text" {
            continue;
        }
        if found.is_some() {
            return Err("more than one text parameter");
        }
        found = Some(value);
    }
    let raw = match found {
        Some(raw) if !raw.is_empty() => raw,
        _ => return Err("missing text: ask for /qr.svg?text=<percent-encoded http(s) link>"),
    };
    // Checked before decoding as well, so no long query is decoded at all (each decoded byte
    // takes one to three characters).
    if raw.len() > 3 * MAX_TEXT_BYTES {
        return Err("text is longer than 512 bytes");
    }
    let bytes = percent_decode(raw).ok_or("text is not valid percent-encoding")?;
    if bytes.len() > MAX_TEXT_BYTES {
        return Err("text is longer than 512 bytes");
    }
    let text = String::from_utf8(bytes).map_err(|_| "text is not UTF-8")?;
    if !is_web_link(&text) {
        return Err("text must be an http:// or https:// link");
    }
    Ok(text)
}

/// Decodes `%XX` escapes strictly: `None` for a `%` not followed by two hex digits.
fn percent_decode(raw: &str) -> Option<Vec<u8>> {
    let hex = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut bytes = raw.bytes();
    let mut out = Vec::with_capacity(raw.len());
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let high = hex(bytes.next()?)?;
            let low = hex(bytes.next()?)?;
            out.push(high << 4 | low);
        } else {
            out.push(b);
        }
    }
    Some(out)
}

/// Whether `text` is an absolute `http://` or `https://` link with a host, and nothing a
/// camera app would show oddly (no control characters or spaces).
fn is_web_link(text: &str) -> bool {
    let scheme_ok = ["http://", "https://"].iter().any(|scheme| {
        text.get(..scheme.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
    });
    scheme_ok
        && !text.chars().any(|c| c.is_control() || c.is_whitespace())
        && url::Url::parse(text).is_ok_and(|url| url.host().is_some())
}

/// `text` as an SVG QR code (medium error correction, a 4-module quiet zone, black on white,
/// one unit per module in a `viewBox`, no fixed size). `Err` only for text too long for any
/// QR code, which [`text_of`] never lets through.
pub(crate) fn svg_of(text: &str) -> Result<String, Refusal> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|_| "text does not fit in a QR code")?;
    let image = code
        .render::<svg::Color<'_>>()
        .quiet_zone(true)
        .module_dimensions(1, 1)
        .dark_color(svg::Color("#000"))
        .light_color(svg::Color("#fff"))
        .build();
    // The renderer writes the size twice, as width/height and as the viewBox: keep only the
    // viewBox so the image takes the size the page gives it.
    let side = code.width() + 8;
    Ok(image.replacen(
        &format!(r#" width="{side}" height="{side}" viewBox"#),
        " viewBox",
        1,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_one_http_link() {
        let link = "https://melee.example/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50";
        assert_eq!(
            text_of(Some(
                "text=https%3A%2F%2Fmelee.example%2Ft%2F5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50"
            )),
            Ok(link.to_owned())
        );
        assert_eq!(
            text_of(Some(&format!("v=2&text={link}"))),
            Ok(link.to_owned())
        );
        assert_eq!(
            text_of(Some("text=HTTP://127.0.0.1:8080/?a=1+2")),
            Ok("HTTP://127.0.0.1:8080/?a=1+2".to_owned())
        );
        assert_eq!(
            text_of(Some("text=http%3A%2F%2Fb%C3%BCcher.example%2F")),
            Ok("http://bücher.example/".to_owned())
        );
        let longest = format!("http://a.example/{}", "x".repeat(512 - 17));
        assert_eq!(text_of(Some(&format!("text={longest}"))), Ok(longest));
    }

    #[test]
    fn the_query_is_refused_with_its_reason() {
        let too_long = format!("text=http://a.example/{}", "x".repeat(512 - 16));
        let too_long_escaped = format!("text=http://a.example/{}", "%41".repeat(500));
        for (query, reason) in [
            (None, "missing text"),
            (Some(""), "missing text"),
            (Some("text="), "missing text"),
            (Some("text"), "missing text"),
            (Some("link=http://a.example/"), "missing text"),
            (Some("text=http://a.example/%4"), "percent-encoding"),
            (Some("text=http://a.example/%zz"), "percent-encoding"),
            (Some("text=http://a.example/%"), "percent-encoding"),
            (Some("text=http://a.example/%FF"), "not UTF-8"),
            (Some(too_long.as_str()), "longer than 512 bytes"),
            (Some(too_long_escaped.as_str()), "longer than 512 bytes"),
            (Some("text=ftp://a.example/"), "http:// or https://"),
            (Some("text=javascript:alert(1)"), "http:// or https://"),
            (Some("text=hello"), "http:// or https://"),
            (Some("text=http://"), "http:// or https://"),
            (Some("text=http://a.example/%0Ax"), "http:// or https://"),
            (Some("text=http://a.example/%20x"), "http:// or https://"),
            (Some("text=http://a/&text=http://b/"), "more than one"),
        ] {
            let refused = text_of(query).unwrap_err();
            assert!(refused.contains(reason), "{query:?}: {refused}");
            assert!(!refused.contains('\n'), "{refused}");
        }
    }

    #[test]
    fn the_svg_scales_and_is_black_on_white() {
        let svg = svg_of("http://127.0.0.1:8080/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50").unwrap();
        let root = &svg[svg.find("<svg").unwrap()..];
        let root = &root[..root.find('>').unwrap()];
        assert!(root.contains(r#"viewBox="0 0 "#), "{root}");
        assert!(!root.contains("width="), "{root}");
        assert!(!root.contains("height="), "{root}");
        assert!(svg.contains(r##"fill="#fff""##), "{svg}");
        assert!(svg.contains(r##"fill="#000""##), "{svg}");
    }
}
