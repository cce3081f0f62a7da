//! Reading a project page of the simple API: PEP 691 JSON, or PEP 503 HTML as pip reads it.

use std::collections::BTreeMap;

use url::Url;

/// The media type of a PEP 691 JSON page.
pub const JSON_TYPE: &str = "application/vnd.pypi.simple.v1+json";

/// One file the project page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageFile {
    pub filename: String,
    pub url: String,
    pub sha256: Option<String>,
    pub size: Option<u64>,
    pub yanked: bool,
}

/// The files of a PEP 691 JSON page.
pub fn parse_json(body: &[u8]) -> Result<Vec<PageFile>, String> {
    #[derive(serde::Deserialize)]
    struct Page {
        files: Vec<Object<File>>,
    }
    #[derive(serde::Deserialize)]
    struct File {
        filename: String,
        url: String,
        #[serde(default)]
        hashes: BTreeMap<String, String>,
        #[serde(default)]
        size: Option<u64>,
        #[serde(default)]
        yanked: serde_json::Value,
    }
    // JSON is UTF-8 throughout: read from bytes, serde_json would not look at a key or value
    // it skips, and take a page no JSON reader takes.
    let text = std::str::from_utf8(body).map_err(|e| format!("not a PEP 691 page: not UTF-8 ({e})"))?;
    let Object(page): Object<Page> = serde_json::from_str(text).map_err(|e| format!("not a PEP 691 page: {e}"))?;
    Ok(page
        .files
        .into_iter()
        .map(|Object(f)| PageFile {
            sha256: f.hashes.get("sha256").cloned(),
            yanked: match &f.yanked {
                serde_json::Value::Bool(b) => *b,
                serde_json::Value::String(_) => true,
                _ => false,
            },
            filename: f.filename,
            url: f.url,
            size: f.size,
        })
        .collect())
}

/// A JSON object read as `T`. A derived struct also takes an array of its fields in order
/// (`[[]]` would read as a page listing nothing), which no PEP 691 page or file is.
struct Object<T>(T);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData)).map(Object)
    }
}

/// The anchors of a PEP 503 HTML page, as pip reads them: each `<a href="URL#sha256=…"
/// data-yanked…>`, its URL resolved against the page (or the page's first `<base href>` before
/// any anchor), its file name the last segment of the URL's path (percent-decoded), never the
/// anchor's text. `tl` tokenizes the page in linear time; a comment is no anchor, an attribute
/// value in quotes may hold `>`, and of two `href`s the first counts. Entities in attribute
/// values are decoded (`html-escape`). What Python's HTML parser (pip's) reads as text is no
/// anchor: the content of `<script>` and `<style>`, and `<![CDATA[ … ]]>` sections
/// ([`without_raw_text`]).
pub fn parse_html(body: &[u8], page: &Url) -> Vec<PageFile> {
    let text = String::from_utf8_lossy(body);
    let text = without_raw_text(&text);
    let Ok(dom) = tl::parse(&text, tl::ParserOptions::default()) else {
        return Vec::new();
    };
    // Attribute names are case-insensitive in HTML; of two with one name, the first counts.
    let attribute = |tag: &tl::HTMLTag, name: &str| -> Option<String> {
        let (_, raw) = tag.attributes().iter().find(|(k, _)| k.eq_ignore_ascii_case(name))?;
        Some(html_escape::decode_html_entities(&raw.unwrap_or_default()).into_owned())
    };
    let tags = || dom.nodes().iter().filter_map(|n| n.as_tag());
    let is = |tag: &tl::HTMLTag, name: &str| tag.name().as_utf8_str().eq_ignore_ascii_case(name);
    let base = tags()
        .take_while(|t| !is(t, "a"))
        .find(|t| is(t, "base"))
        .and_then(|t| attribute(t, "href"))
        .and_then(|href| page.join(&href).ok())
        .unwrap_or_else(|| page.clone());
    tags()
        .filter(|t| is(t, "a"))
        .filter_map(|a| {
            let href = attribute(a, "href").filter(|h| !h.is_empty())?;
            let mut url = base.join(&href).ok()?;
            let sha256 = url
                .fragment()
                .and_then(|f| f.strip_prefix("sha256="))
                .map(str::to_string);
            url.set_fragment(None);
            let last = url.path_segments()?.next_back()?.to_string();
            let filename = percent_encoding::percent_decode_str(&last)
                .decode_utf8_lossy()
                .into_owned();
            Some(PageFile {
                filename,
                url: url.to_string(),
                sha256,
                size: None,
                yanked: attribute(a, "data-yanked").is_some(),
            })
        })
        .collect()
}

/// `text` without what Python's `html.parser` never reads a tag in: the content of each
/// `<script>` and `<style>` element (up to `</script` or `</style` followed by white space, `/`
/// or `>`, else to the end) and each `<![ … ]]>` marked section (CDATA). Comments are kept as
/// they are (`tl` skips them), and a `<script>` inside one starts nothing. One pass, linear.
fn without_raw_text(text: &str) -> std::borrow::Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let (bytes, low) = (text.as_bytes(), lower.as_bytes());
    let delimits = |at: usize| low.get(at).is_none_or(|b| b" \t\n\r\x0c/>".contains(b));
    let mut out = String::new();
    let (mut copied, mut i) = (0, 0);
    while let Some(found) = lower[i..].find('<') {
        let at = i + found;
        let rest = &low[at..];
        if rest.starts_with(b"<!--") {
            i = lower[at + 4..].find("-->").map_or(low.len(), |e| at + 4 + e + 3);
            continue;
        }
        let (skip_from, skip_to) = if rest.starts_with(b"<![") {
            let end = lower[at..].find("]]>").map_or(low.len(), |e| at + e + 3);
            (at, end)
        } else if let Some(tag) = ["script", "style"]
            .into_iter()
            .find(|t| rest[1..].starts_with(t.as_bytes()) && delimits(at + 1 + t.len()))
        {
            // The start tag itself stays (a quoted `>` does not end it).
            let mut quote = None;
            let mut open_end = low.len();
            for (k, b) in low[at..].iter().enumerate() {
                match (quote, *b) {
                    (None, b'"' | b'\'') => quote = Some(*b),
                    (Some(q), b) if b == q => quote = None,
                    (None, b'>') => {
                        open_end = at + k + 1;
                        break;
                    }
                    _ => {}
                }
            }
            let close = format!("</{tag}");
            let mut end = low.len();
            let mut from = open_end;
            while let Some(e) = lower.get(from..).and_then(|r| r.find(&close)) {
                if delimits(from + e + close.len()) {
                    end = from + e;
                    break;
                }
                from += e + close.len();
            }
            (open_end, end)
        } else {
            i = at + 1;
            continue;
        };
        out.push_str(&text[copied..skip_from]);
        copied = skip_to;
        i = skip_to;
        if i >= bytes.len() {
            break;
        }
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[copied.min(text.len())..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What pip's reader (Python's `html.parser`) finds on a page hiding anchors in scripts,
    /// styles and CDATA — checked against Python itself when this test was written: only the
    /// three real anchors.
    #[test]
    fn scripts_styles_and_cdata_hold_no_anchor() {
        let page_bytes = br#"<html><head><script type="text/javascript">
var s = '<a href="evil-9.0.0-py3-none-any.whl#sha256=ff">x</a>';
</script><style>a::after{content:'<a href="evil-9.1.0-py3-none-any.whl">'}</style></head><body>
<![CDATA[ <a href="evil-9.2.0-py3-none-any.whl">y</a> ]]>
<a href="esys_a2c-1.0.0-py3-none-any.whl#sha256=ab">ok</a>
<!-- <script> -->
<a href="esys_a2c-1.1.0-py3-none-any.whl#sha256=cd">ok</a>
<SCRIPT>document.write('<a href="evil-9.3.0-py3-none-any.whl">')</SCRIPT >
<scripts><a href="esys_a2c-1.2.0-py3-none-any.whl">ok</a></scripts>
<script>unterminated <a href="evil-9.4.0-py3-none-any.whl">
"#;
        let names: Vec<String> = parse_html(page_bytes, &page())
            .into_iter()
            .map(|f| f.filename)
            .collect();
        assert_eq!(
            names,
            [
                "esys_a2c-1.0.0-py3-none-any.whl",
                "esys_a2c-1.1.0-py3-none-any.whl",
                "esys_a2c-1.2.0-py3-none-any.whl"
            ]
        );
    }

    fn page() -> Url {
        Url::parse("https://pypi.example.org/simple/esys-a2c/").unwrap()
    }

    #[test]
    fn html_pages_read_as_pip_reads_them() {
        let page_bytes = br#"<!DOCTYPE html><html><body>
            <a href="/packages/esys_a2c-1.0.0-py3-none-any.whl#sha256=ab12">esys_a2c-1.0.0-py3-none-any.whl</a><br>
            <A HREF='../../p/esys_a2c-1.1.0-py3-none-any.whl#sha256=cd34' data-yanked="broken &amp; replaced">esys_a2c-1.1.0-py3-none-any.whl</A>
            <abbr title="x">not a link</abbr>
            <a href="esys-a2c-1.0.0.tar.gz">esys-a2c-1.0.0.tar.gz</a>
        </body></html>"#;
        let files = parse_html(page_bytes, &page());
        assert_eq!(files.len(), 3, "{files:?}");
        assert_eq!(
            files[0].url,
            "https://pypi.example.org/packages/esys_a2c-1.0.0-py3-none-any.whl"
        );
        assert_eq!(files[0].sha256.as_deref(), Some("ab12"));
        assert!(!files[0].yanked);
        assert_eq!(files[1].filename, "esys_a2c-1.1.0-py3-none-any.whl");
        assert_eq!(
            files[1].url,
            "https://pypi.example.org/p/esys_a2c-1.1.0-py3-none-any.whl"
        );
        assert!(files[1].yanked);
        assert_eq!(files[2].sha256, None);
    }

    /// What the hand-written reader got wrong, each as pip reads it.
    #[test]
    fn comments_quotes_base_and_names_as_pip_reads_them() {
        let page_bytes = br#"<html><head><base href="https://cdn.example.net/files/"></head><body>
            <!-- <a href="evil-9.9.9-py3-none-any.whl#sha256=ff">esys_a2c-9.9.9-py3-none-any.whl</a> -->
            <a href="esys_a2c-1.0.0-py3-none-any.whl#sha256=ab" data-requires-python=">=3.8">whatever text</a>
            <a href="esys_a2c-1.1.0-py3-none-any.whl#sha256=cd" href="other-1.1.0-py3-none-any.whl">x</a>
            <a href="esys_a2c-1.2.0%2Blocal-py3-none-any.whl?x=1&amp;y=2#sha256=ef">y</a>
        </body></html>"#;
        let files = parse_html(page_bytes, &page());
        let names: Vec<&str> = files.iter().map(|f| f.filename.as_str()).collect();
        assert_eq!(
            names,
            [
                "esys_a2c-1.0.0-py3-none-any.whl",
                "esys_a2c-1.1.0-py3-none-any.whl",
                "esys_a2c-1.2.0+local-py3-none-any.whl"
            ],
            "{files:?}"
        );
        assert_eq!(
            files[0].url,
            "https://cdn.example.net/files/esys_a2c-1.0.0-py3-none-any.whl"
        );
        assert_eq!(
            files[2].url,
            "https://cdn.example.net/files/esys_a2c-1.2.0%2Blocal-py3-none-any.whl?x=1&y=2"
        );
        assert_eq!(files[2].sha256.as_deref(), Some("ef"));
    }

    /// A page of 4 MiB of `&` with no `;` (and of unclosed tags) is read, its anchor
    /// found (the old reader took ~8.7 s for 512 KiB of `&`, and four times as long per
    /// doubling: this test would not end). The time is measured in bench/, not asserted here.
    #[test]
    fn a_hostile_page_is_read_to_its_anchor() {
        for filler in [&b"&"[..], b"<a href=\"", b"<!--", b"<"] {
            let mut bytes = b"<a href=\"esys_a2c-1.0.0-py3-none-any.whl#sha256=ab\">x</a>".to_vec();
            while bytes.len() < 4 << 20 {
                bytes.extend_from_slice(filler);
            }
            let files = parse_html(&bytes, &page());
            assert_eq!(
                files.first().map(|f| f.filename.as_str()),
                Some("esys_a2c-1.0.0-py3-none-any.whl")
            );
        }
    }

    #[test]
    fn json_pages_read_hashes_sizes_and_yanks() {
        let page = br#"{"meta":{"api-version":"1.1"},"name":"esys-a2c","files":[
            {"filename":"esys_a2c-1.0.0-py3-none-any.whl","url":"https://f/x.whl","hashes":{"sha256":"ab"},"size":10,"yanked":false},
            {"filename":"esys_a2c-1.1.0-py3-none-any.whl","url":"y.whl","hashes":{},"yanked":"bad build"}]}"#;
        let files = parse_json(page).unwrap();
        assert_eq!(files[0].size, Some(10));
        assert_eq!(files[0].sha256.as_deref(), Some("ab"));
        assert!(files[1].yanked && files[1].sha256.is_none());
        assert!(parse_json(b"<html>").is_err());
        // Bytes that are not UTF-8 where the reader skips (found by the fuzzer).
        let skipped = b"{\"meta\":{\"api\xd9-version\":\"1.1\"},\"files\":[]}";
        let e = parse_json(skipped).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        // Arrays of the fields in order, as a derived struct would take them (found too).
        for array in [&b"[[]]"[..], br#"{"files":[["x.whl","https://f/x.whl"]]}"#] {
            let e = parse_json(array).unwrap_err();
            assert!(e.contains("expected a JSON object"), "{e}");
        }
    }
}
