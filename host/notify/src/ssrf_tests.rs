use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().expect(s)
}

fn strict() -> OutboundPolicy {
    OutboundPolicy::default()
}

fn devnet() -> OutboundPolicy {
    OutboundPolicy::allowing(["127.0.0.1", "localhost", "[::1]"]).expect("valid entries")
}

#[test]
fn classify_names_every_non_public_range() {
    let cases = [
        ("127.0.0.1", "loopback"),
        ("127.255.1.2", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("10.255.255.255", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "cgnat"),
        ("100.127.255.255", "cgnat"),
        ("fc00::1", "ula"),
        ("fd12:3456::1", "ula"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("255.255.255.255", "broadcast"),
        ("0.1.2.3", "this-network"),
        ("192.0.2.1", "documentation"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("2001:db8::1", "documentation"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("240.0.0.1", "reserved"),
        ("::ffff:127.0.0.1", "ipv4-mapped"),
        ("::ffff:8.8.8.8", "ipv4-mapped"),
        ("::127.0.0.1", "ipv4-compatible"),
        ("::8.8.8.8", "ipv4-compatible"),
        ("64:ff9b::a00:1", "nat64"),
        ("2002:a00:1::1", "6to4"),
        ("2001:0:a00:1::1", "teredo"),
        ("fec0::1", "site-local"),
        ("100::1", "discard"),
        ("4000::1", "reserved"),
    ];
    for (addr, range) in cases {
        assert_eq!(classify(ip(addr)), Some(range), "{addr}");
    }
}

#[test]
fn classify_passes_public_addresses() {
    let public = [
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1111",
        "2001:4860:4860::8888",
        "172.15.255.255",
        "172.32.0.1",
        "100.63.255.255",
        "100.128.0.1",
        "192.169.0.1",
        "169.253.0.1",
        "198.20.0.1",
        "223.255.255.255",
        "11.0.0.1",
    ];
    for addr in public {
        assert_eq!(classify(ip(addr)), None, "{addr}");
    }
}

/// The corpus of URLs that must be refused on their face, each
/// with the range (or reason) named in the refusal.
#[test]
fn the_ssrf_corpus_is_refused_on_its_face() {
    let cases = [
        (
            "https://127.0.0.1/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://127.1/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://0x7f.1/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://2130706433/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://0177.0.0.1/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://127.0.0.1./hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://0x7f000001/hook",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://%31%32%37.0.0.1/",
            "127.0.0.1 is not a public address (loopback)",
        ),
        (
            "https://[::1]/hook",
            "::1 is not a public address (loopback)",
        ),
        (
            "https://[::ffff:127.0.0.1]/hook",
            "::ffff:127.0.0.1 is not a public address (ipv4-mapped)",
        ),
        (
            "https://[::ffff:808:808]/",
            "is not a public address (ipv4-mapped)",
        ),
        (
            "https://10.1.2.3/",
            "10.1.2.3 is not a public address (private)",
        ),
        (
            "https://172.16.9.9/",
            "172.16.9.9 is not a public address (private)",
        ),
        (
            "https://172.31.0.1/",
            "172.31.0.1 is not a public address (private)",
        ),
        (
            "https://192.168.0.10/",
            "192.168.0.10 is not a public address (private)",
        ),
        (
            "https://169.254.169.254/latest/meta-data/",
            "169.254.169.254 is not a public address (link-local)",
        ),
        (
            "https://100.64.1.1/",
            "100.64.1.1 is not a public address (cgnat)",
        ),
        (
            "https://[fc00::1]/",
            "fc00::1 is not a public address (ula)",
        ),
        (
            "https://[fd00::abcd]/",
            "fd00::abcd is not a public address (ula)",
        ),
        (
            "https://0.0.0.0/",
            "0.0.0.0 is not a public address (unspecified)",
        ),
        ("https://localhost/hook", "localhost is a local name"),
        (
            "https://api.LOCALHOST./hook",
            "api.localhost. is a local name",
        ),
        (
            "http://example.com/hook",
            "http is not allowed for example.com",
        ),
        ("ftp://example.com/x", "scheme \"ftp\" is not allowed"),
        ("file:///etc/passwd", "scheme \"file\" is not allowed"),
        ("https://user:pw@example.com/", "user name or password"),
        ("https://user@example.com/", "user name or password"),
        ("not a url", "is not a valid URL"),
        ("https://", "is not a valid URL"),
    ];
    for (url, why) in cases {
        let e = check_url(url, &strict()).expect_err(url).to_string();
        assert!(e.contains(why), "{url}: {e:?} should say {why:?}");
    }
}

#[test]
fn an_overlong_url_is_refused() {
    let url = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
    let e = check_url(&url, &strict()).expect_err("too long");
    assert!(
        matches!(
            e,
            UrlRefused::TooLong {
                max: MAX_URL_LEN,
                ..
            }
        ),
        "{e}"
    );
    let fits = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN - 20));
    assert!(check_url(&fits, &strict()).is_ok());
}

#[test]
fn public_https_urls_pass_with_host_and_port() {
    let t = check_url("https://Hooks.Example.com/x?y=1", &strict()).expect("public");
    assert_eq!(t.host(), &Host::Domain("hooks.example.com".to_string()));
    assert_eq!(t.port(), 443);
    assert_eq!(t.url().as_str(), "https://hooks.example.com/x?y=1");
    let t = check_url("https://8.8.8.8:8443/", &strict()).expect("public ip");
    assert_eq!(t.port(), 8443);
    assert!(check_url("https://[2606:4700::1111]/", &strict()).is_ok());
    assert!(check_url("https://1.1.1.1/", &strict()).is_ok());
}

#[test]
fn allowed_hosts_may_use_http_and_loopback() {
    let p = devnet();
    for url in [
        "http://127.0.0.1:9000/hook",
        "http://127.1:9000/hook",
        "http://0x7f.1:9000/hook",
        "http://localhost:1234/",
        "http://[::1]:8080/",
        "https://127.0.0.1/",
    ] {
        assert!(check_url(url, &p).is_ok(), "{url}");
    }
    // Other loopback addresses, mapped forms and private ranges are not
    // what the operator listed.
    for url in [
        "http://127.0.0.2/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.1/",
        "http://example.com/",
        "http://sub.localhost/",
    ] {
        assert!(check_url(url, &p).is_err(), "{url}");
    }
}

#[test]
fn allow_entries_with_a_port_cover_that_port_only() {
    let p = OutboundPolicy::allowing(["127.0.0.1:9000", "[::1]:*"]).expect("valid");
    assert!(check_url("http://127.0.0.1:9000/", &p).is_ok());
    let e = check_url("http://127.0.0.1:9001/", &p).expect_err("other port");
    assert!(matches!(e, UrlRefused::PlainHttp(_)), "{e}");
    assert!(check_url("http://[::1]:1/", &p).is_ok());
    assert!(OutboundPolicy::allowing(["[::1"]).is_err());
}

#[test]
fn from_config_reads_allow_http() {
    let c = NotifyConfig {
        allow_http: vec!["localhost".into(), "[bad".into()],
        ..NotifyConfig::default()
    };
    let p = OutboundPolicy::from_config(&c);
    assert!(check_url("http://localhost:5/", &p).is_ok());
    assert!(check_url("http://127.0.0.1:5/", &p).is_err());
}

fn resolver() -> StaticResolver {
    StaticResolver::default()
        .with("internal.example", [ip("10.0.0.5")])
        .with(
            "mixed.example",
            [ip("93.184.216.34"), ip("169.254.169.254")],
        )
        .with(
            "public.example",
            [ip("93.184.216.34"), ip("2606:4700::1111")],
        )
        .with("mapped.example", [ip("::ffff:10.0.0.1")])
        .with("localhost", [ip("127.0.0.1"), ip("::1")])
        .with("rebind.example", [ip("127.0.0.1")])
}

async fn pin_url(url: &str, policy: &OutboundPolicy) -> Result<SocketAddr, UrlRefused> {
    let t = check_url(url, policy)?;
    pin(&t, policy, &resolver()).await
}

#[tokio::test]
async fn a_name_resolving_to_a_forbidden_address_is_refused_naming_it() {
    let cases = [
        (
            "https://internal.example/hook",
            "internal.example resolves to 10.0.0.5 (private)",
        ),
        (
            "https://mixed.example/hook",
            "mixed.example resolves to 169.254.169.254 (link-local)",
        ),
        (
            "https://mapped.example/",
            "mapped.example resolves to ::ffff:10.0.0.1 (ipv4-mapped)",
        ),
        (
            "https://rebind.example/",
            "rebind.example resolves to 127.0.0.1 (loopback)",
        ),
        (
            "https://unknown.example/",
            "unknown.example could not be resolved",
        ),
    ];
    for (url, why) in cases {
        let e = pin_url(url, &strict()).await.expect_err(url).to_string();
        assert!(e.contains(why), "{url}: {e:?} should say {why:?}");
    }
}

#[tokio::test]
async fn pin_returns_the_resolved_address_to_connect_to() {
    let a = pin_url("https://public.example:8443/x", &strict()).await;
    assert_eq!(a, Ok("93.184.216.34:8443".parse().expect("addr")));
    let a = pin_url("https://1.1.1.1/", &strict()).await;
    assert_eq!(a, Ok("1.1.1.1:443".parse().expect("addr")));
    let a = pin_url("http://localhost:7000/", &devnet()).await;
    assert_eq!(a, Ok("127.0.0.1:7000".parse().expect("addr")));
}

#[tokio::test]
async fn pin_rechecks_the_policy_it_is_given() {
    // Checked under the devnet policy, delivered under a strict one.
    let t = check_url("http://127.0.0.1:9/", &devnet()).expect("allowed");
    let e = pin(&t, &strict(), &resolver()).await.expect_err("strict");
    assert_eq!(
        e.to_string(),
        format!(
            "127.0.0.1 is not a public address (loopback): webhooks go to public addresses only"
        )
    );
}

#[tokio::test]
async fn the_system_resolver_resolves_localhost() {
    let ips = SystemResolver
        .resolve("localhost", 80)
        .await
        .expect("resolves");
    assert!(ips.iter().all(|i| i.is_loopback()), "{ips:?}");
}
