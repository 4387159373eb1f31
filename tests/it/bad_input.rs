//! Bad input gets one clear line naming the file or URL, and the batch goes
//! on: a broken site file, a dead host, a response that is not HTML.

use crate::common;

use common::{serve_static, Work};
use luntan_core::ThreadState;
use luntan_fixture::{FixtureConfig, FixtureServer, ForumKind};

fn site_file(id: &str, home: &str) -> String {
    format!(
        r#"<site id="{id}">
  <home>{home}</home>
  <politeness delay-ms="0" concurrency="2" retries="1" timeout-ms="3000"/>
  <links>
    <board><![CDATA[/board/{{board}}$]]></board>
    <thread><![CDATA[/thread/{{thread}}$]]></thread>
  </links>
  <thread body="div.post"/>
</site>
"#
    )
}

#[test]
fn broken_site_file_dead_host_and_non_html_each_get_one_line_and_the_rest_goes_on() {
    let server = FixtureServer::start_blocking(FixtureConfig { threads: 30, boards: 2, forums: vec![ForumKind::Discuz], ..FixtureConfig::default() }).unwrap();
    let work = Work::new();
    server.write_site_files(&work.sites()).unwrap();

    let pdf = serve_static(vec![
        ("/", "text/html", br#"<a href="/board/1">board</a>"#.to_vec()),
        ("/board/1", "text/html", br#"<a href="/thread/5">a pdf</a><a href="/thread/6">a page</a>"#.to_vec()),
        ("/thread/5", "application/pdf", b"%PDF-1.4 not a page".to_vec()),
        ("/thread/6", "text/html; charset=utf-8", "<div class=post>正文</div>".as_bytes().to_vec()),
    ]);
    std::fs::write(work.sites().join("pdf.xml"), site_file("pdf", &format!("{pdf}/"))).unwrap();
    std::fs::write(work.sites().join("dead.xml"), site_file("dead", "http://127.0.0.1:1/")).unwrap();
    let broken = work.sites().join("broken.xml");
    std::fs::write(&broken, "<site id=\"broken\">\n  <home>http://x/</home>\n  <links><board>(</board></links>\n</site>\n").unwrap();

    let out = work.stage("discover", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a broken site file makes the run exit 2\n{stderr}");
    let broken_line = stderr.lines().find(|l| l.contains("broken.xml")).unwrap_or_else(|| panic!("no line names broken.xml:\n{stderr}"));
    assert!(broken_line.starts_with(&format!("{}: line ", broken.display())), "{broken_line}");
    assert_eq!(stderr.lines().filter(|l| l.contains("broken.xml")).count(), 1, "{stderr}");
    let dead_lines: Vec<_> = stderr.lines().filter(|l| l.contains("127.0.0.1:1/")).collect();
    assert_eq!(dead_lines.len(), 1, "one line for the dead host:\n{stderr}");
    assert!(dead_lines[0].contains("connect"), "{}", dead_lines[0]);

    let out = work.stage("download", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let pdf_lines: Vec<_> = stderr.lines().filter(|l| l.contains("/thread/5")).collect();
    assert_eq!(pdf_lines.len(), 1, "{stderr}");
    assert!(pdf_lines[0].contains("not an HTML page") && pdf_lines[0].contains("application/pdf"), "{}", pdf_lines[0]);

    let rows = work.rows();
    assert_eq!(rows[&("pdf".to_string(), "5".to_string())].0, ThreadState::Failed);
    assert!(rows[&("pdf".to_string(), "5".to_string())].1.as_deref().unwrap().contains("not an HTML page"));
    assert_eq!(rows[&("pdf".to_string(), "6".to_string())].0, ThreadState::Saved);
    let dz_saved = rows.iter().filter(|((s, _), r)| s == "dz" && r.0 == ThreadState::Saved).count();
    let truth = server.truth();
    let dz_live = truth.forums[0].threads.iter().filter(|t| !t.deleted).count();
    assert_eq!(dz_saved, dz_live, "the good forum was crawled whole beside the bad ones");
    assert!(!rows.keys().any(|(s, _)| s == "broken" || s == "dead"));

    // Asking for one good forum does not mention the broken file.
    let out = work.stage("discover", &["--site", "dz"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("broken.xml"));
}
