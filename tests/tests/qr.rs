//! `GET /qr.svg?text=<link>` over real sockets: the SVG served for a table link is read back
//! (its dark modules drawn into a bitmap and decoded by `rqrr`, as a phone camera would) to
//! exactly that link; every refused query answers 400 with its reason.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;

use grand_melee_e2e::{TestServer, http_request_bytes};

/// An answer split into its head (status line and headers) and body.
struct Answer {
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn status(&self) -> u16 {
        self.head.split(' ').nth(1).unwrap().parse().unwrap()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

async fn request(addr: SocketAddr, method: &str, target: &str, extra: &str) -> Answer {
    let bytes = http_request_bytes(
        addr,
        &format!(
            "{method} {target} HTTP/1.1\r\nHost: localhost\r\n{extra}Connection: close\r\n\r\n"
        ),
    )
    .await;
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    Answer {
        head: String::from_utf8(bytes[..split].to_vec()).unwrap(),
        body: bytes[split + 4..].to_vec(),
    }
}

/// Percent-encodes everything but the unreserved characters, as `encodeURIComponent` does
/// (and more).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of the attribute `name` in the first `<tag ...>` of `svg`.
fn attribute<'a>(svg: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let start = svg.find(&format!("<{tag} "))?;
    let element = &svg[start..start + svg[start..].find('>')?];
    let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&element[at..at + element[at..].find('"')?])
}

/// The SVG's modules: `side` × `side` booleans (true: dark), read from its `viewBox` and its
/// black path of rectangles (`M x y h w v h H x V y`, one per dark module or run).
fn modules(svg: &str) -> (usize, Vec<bool>) {
    let view_box: Vec<usize> = attribute(svg, "svg", "viewBox")
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(view_box[..2], [0, 0]);
    assert_eq!(view_box[2], view_box[3], "square");
    let side = view_box[2];
    assert_eq!(
        attribute(svg, "path", "fill"),
        Some("#000"),
        "black modules"
    );
    assert_eq!(attribute(svg, "rect", "fill"), Some("#fff"), "on white");
    let mut dark = vec![false; side * side];
    let path = attribute(svg, "path", "d").unwrap();
    for rect in path.split('M').skip(1) {
        let numbers: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect();
        assert!(rect.starts_with(|c: char| c.is_ascii_digit()), "{rect}");
        let [x, y, w, h] = numbers[..4] else {
            panic!("{rect}")
        };
        for row in y..y + h {
            for column in x..x + w {
                dark[row * side + column] = true;
            }
        }
    }
    (side, dark)
}

/// Reads the QR code in `svg` as a camera would: drawn at 4 pixels a module, then decoded.
/// Also checks the 4-module quiet zone is white. Returns the text and the error-correction
/// level (0: medium).
fn read_back(svg: &str) -> (String, u16) {
    let (side, dark) = modules(svg);
    for i in 0..side {
        for quiet in [0, 1, 2, 3, side - 4, side - 3, side - 2, side - 1] {
            assert!(!dark[quiet * side + i], "quiet zone, row {quiet}");
            assert!(!dark[i * side + quiet], "quiet zone, column {quiet}");
        }
    }
    let scale = 4;
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(side * scale, side * scale, |x, y| {
            if dark[(y / scale) * side + x / scale] {
                0
            } else {
                255
            }
        });
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code");
    let (meta, text) = grids[0].decode().unwrap();
    (text, meta.ecc_level)
}

#[tokio::test]
async fn a_table_link_served_as_a_qr_code_reads_back_to_exactly_that_link() {
    let server = TestServer::start().await;
    let short = format!(
        "http://{}/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50",
        server.addr
    );
    let long = format!(
        "https://grand-melee.example.org:8443/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50?seat=12&name=B%C3%BCcherwurm&host=yes&note={}",
        "Friday-night-melee-at-the-club".repeat(3)
    );
    assert!((190..=230).contains(&long.len()), "{}", long.len());
    for link in [short, long] {
        let answer = request(
            server.addr,
            "GET",
            &format!("/qr.svg?text={}", encode(&link)),
            "",
        )
        .await;
        assert_eq!(answer.status(), 200, "{}", answer.head);
        assert_eq!(answer.header("content-type"), Some("image/svg+xml"));
        assert_eq!(
            answer.header("cache-control"),
            Some("public, max-age=86400")
        );
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(answer.header("content-encoding"), None);
        let svg = String::from_utf8(answer.body.clone()).unwrap();
        assert_eq!(attribute(&svg, "svg", "width"), None, "scales: {svg}");
        assert_eq!(attribute(&svg, "svg", "height"), None, "scales: {svg}");
        let (text, ecc_level) = read_back(&svg);
        assert_eq!(text, link);
        assert_eq!(ecc_level, 0, "medium error correction");

        // The same answer gzipped for a browser that takes it, and nothing but the head for HEAD.
        let target = format!("/qr.svg?text={}", encode(&link));
        let gzipped = request(server.addr, "GET", &target, "Accept-Encoding: gzip\r\n").await;
        assert_eq!(gzipped.status(), 200);
        assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
        assert!(gzipped.body.starts_with(&[0x1f, 0x8b]), "a gzip stream");
        assert!(gzipped.body.len() < answer.body.len() / 2);
        let head = request(server.addr, "HEAD", &target, "").await;
        assert_eq!(head.status(), 200);
        assert_eq!(head.header("content-type"), Some("image/svg+xml"));
        assert!(head.body.is_empty());
    }
}

#[tokio::test]
async fn a_refused_qr_code_query_answers_400_with_its_reason() {
    let server = TestServer::start().await;
    let too_long = format!("http://a.example/{}", "x".repeat(496));
    assert_eq!(too_long.len(), 513);
    let cases = [
        ("/qr.svg".to_owned(), "missing text"),
        ("/qr.svg?text=".to_owned(), "missing text"),
        (
            "/qr.svg?link=http%3A%2F%2Fa.example%2F".to_owned(),
            "missing text",
        ),
        (
            "/qr.svg?text=http%3A%2F%2Fa.example%2F%4".to_owned(),
            "not valid percent-encoding",
        ),
        (
            "/qr.svg?text=http%3A%2F%2Fa.example%2F%G1".to_owned(),
            "not valid percent-encoding",
        ),
        (
            "/qr.svg?text=http%3A%2F%2Fa.example%2F%FF".to_owned(),
            "not UTF-8",
        ),
        (
            format!("/qr.svg?text={}", encode(&too_long)),
            "longer than 512 bytes",
        ),
        (
            format!("/qr.svg?text={}", encode("ftp://a.example/")),
            "http:// or https://",
        ),
        (
            format!("/qr.svg?text={}", encode("javascript:alert(1)")),
            "http:// or https://",
        ),
        (
            format!("/qr.svg?text={}", encode("Table 7, back room")),
            "http:// or https://",
        ),
    ];
    for (target, reason) in cases {
        let answer = request(server.addr, "GET", &target, "").await;
        assert_eq!(answer.status(), 400, "{target}: {}", answer.head);
        assert_eq!(
            answer.header("content-type"),
            Some("text/plain; charset=utf-8")
        );
        let body = String::from_utf8(answer.body).unwrap();
        assert!(body.contains(reason), "{target}: {body}");
        assert_eq!(body.lines().count(), 1, "{body}");
        assert!(body.ends_with('\n'), "{body}");
    }
    // The longest link accepted is 512 bytes.
    let longest = &too_long[..512];
    let answer = request(
        server.addr,
        "GET",
        &format!("/qr.svg?text={}", encode(longest)),
        "",
    )
    .await;
    assert_eq!(answer.status(), 200, "{}", answer.head);
    let (text, _) = read_back(&String::from_utf8(answer.body).unwrap());
    assert_eq!(text, longest);
}

/// Every answer's status on one keep-alive connection that pipelines `targets` (the last
/// request closes it), read by their `Content-Length`.
async fn pipelined_statuses(addr: SocketAddr, targets: &[String]) -> Vec<u16> {
    let mut requests = String::new();
    for (i, target) in targets.iter().enumerate() {
        let last = if i + 1 == targets.len() {
            "Connection: close\r\n"
        } else {
            ""
        };
        requests.push_str(&format!(
            "GET {target} HTTP/1.1\r\nHost: localhost\r\n{last}\r\n"
        ));
    }
    let mut bytes = &http_request_bytes(addr, &requests).await[..];
    let mut statuses = Vec::new();
    while !bytes.is_empty() {
        let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = std::str::from_utf8(&bytes[..split]).unwrap();
        statuses.push(head.split(' ').nth(1).unwrap().parse().unwrap());
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().unwrap())
            })
            .unwrap();
        bytes = &bytes[split + 4 + length..];
    }
    statuses
}

async fn metric(addr: SocketAddr, name: &str) -> u64 {
    let answer = request(addr, "GET", "/metrics", "").await;
    let text = String::from_utf8(answer.body).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

/// Issue 43: four keep-alive connections pipelining hundreds of distinct 512-byte links took
/// 6 ms of CPU per code with no limit, and another table's player waited seconds for his
/// snapshot. Now one address draws at most its `--qr-codes-per-minute` (bursts of 10), the rest
/// answer 429 with `Retry-After`, and a code drawn once (a table's own link) is served from the
/// cache, to anyone, even past the budget.
#[tokio::test]
async fn one_address_draws_at_most_its_budget_of_qr_codes_and_a_cached_code_is_always_served() {
    let server = TestServer::start_with(grand_melee_server::ServerConfig {
        // One code a hundred minutes: the burst of 10 is all this test can draw.
        qr_codes_per_minute: 0.01,
        ..Default::default()
    })
    .await;
    let table_link = format!(
        "http://{}/t/5f3c1a2e-8d4b-4c6e-9a7f-0b1c2d3e4f50",
        server.addr
    );
    let table_code = format!("/qr.svg?text={}", encode(&table_link));
    let first = request(server.addr, "GET", &table_code, "").await;
    assert_eq!(first.status(), 200);

    let flood: Vec<String> = (0..50)
        .map(|i| {
            let link = format!("http://a.example/{i:03}/{}", "x".repeat(490));
            format!("/qr.svg?text={}", encode(&link))
        })
        .collect();
    let mut statuses = Vec::new();
    for part in flood.chunks(25) {
        statuses.extend(pipelined_statuses(server.addr, part).await);
    }
    let drawn = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(
        drawn, 9,
        "the burst of 10, less the table's code: {statuses:?}"
    );
    assert_eq!(refused, 41, "{statuses:?}");
    let over = request(server.addr, "GET", &flood[0].replace("000", "999"), "").await;
    assert_eq!(over.status(), 429);
    assert_eq!(over.header("retry-after"), Some("60"));
    assert!(
        String::from_utf8_lossy(&over.body).contains("too many QR codes"),
        "{}",
        String::from_utf8_lossy(&over.body)
    );

    // The table's code, and the ones drawn, come from the cache: never refused.
    for _ in 0..3 {
        let again = request(server.addr, "GET", &table_code, "Accept-Encoding: gzip\r\n").await;
        assert_eq!(again.status(), 200);
        assert_eq!(again.header("content-encoding"), Some("gzip"));
    }
    assert_eq!(
        request(server.addr, "GET", &flood[0], "").await.status(),
        200
    );
    assert_eq!(metric(server.addr, "gm_qr_codes_drawn_total").await, 10);
    assert_eq!(metric(server.addr, "gm_qr_codes_refused_total").await, 42);
}
