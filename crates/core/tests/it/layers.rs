//! The import rules of docs/ARCHITECTURE.md ("Layering rules", 6), checked on the source:
//! the kernel model (`mm`, `vmscan`, `policy`, `thp`, `damon`, and `config` beneath them)
//! never names the layers built on it (`sim`, `scenario`, `api`), `sim` never names the
//! workloads (`scenario`) or the facade (`api`), and `thp` and `damon` reach a reclaim
//! policy only through the `ReclaimPolicy` trait, never a named model. Test-only files
//! (`tests.rs`, `kunit.rs`) and `#[cfg(test)]` modules may build whole machines.

use std::path::{Path, PathBuf};

/// (source path prefix under src/, paths it must not name).
const RULES: &[(&str, &[&str])] = &[
    ("mm/", &["crate::sim", "crate::scenario", "crate::api"]),
    ("vmscan/", &["crate::sim", "crate::scenario", "crate::api"]),
    ("policy/", &["crate::sim", "crate::scenario", "crate::api"]),
    ("thp/", &["crate::sim", "crate::scenario", "crate::api", "policy::classic", "policy::mglru", "policy::cache", "policy::ext"]),
    ("damon/", &["crate::sim", "crate::scenario", "crate::api", "policy::classic", "policy::mglru", "policy::cache", "policy::ext"]),
    ("config.rs", &["crate::sim", "crate::scenario", "crate::api"]),
    ("error.rs", &["crate::sim", "crate::scenario", "crate::api"]),
    ("sim/", &["crate::scenario", "crate::api"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's code outside comments and `#[cfg(test)]` items: a `#[cfg(test)]` line and
/// the item after it, and from an inline test module (`#[cfg(test)] mod x {`) to the end
/// of the file, as every inline test module in this crate is its file's last item.
fn non_test_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if l.starts_with("#[cfg(test)]") {
            let next = lines.get(i + 1).map(|n| n.trim()).unwrap_or("");
            if next.contains("mod ") && next.ends_with('{') {
                break;
            }
            i += 2;
            continue;
        }
        if !l.starts_with("//") {
            code.push(lines[i]);
        }
        i += 1;
    }
    code.join("\n")
}

#[test]
fn lower_layers_never_name_the_layers_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "found only {} source files under {}", files.len(), src.display());
    let mut arrows = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let name = f.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name == "kunit.rs" {
            continue;
        }
        let code = non_test_code(&std::fs::read_to_string(f).unwrap());
        for (prefix, banned) in RULES {
            if !rel.starts_with(prefix) {
                continue;
            }
            for b in *banned {
                if code.contains(b) {
                    arrows.push(format!("{rel} names {b}"));
                }
            }
        }
    }
    assert!(arrows.is_empty(), "imports against the layering rules:\n  {}", arrows.join("\n  "));
}

#[test]
fn the_checker_sees_an_arrow_and_skips_tests_and_comments() {
    assert!(non_test_code("use crate::sim::engine::Machine;\nfn f() {}").contains("crate::sim"));
    assert!(!non_test_code("//! built on crate::sim\nfn f() {}").contains("crate::sim"));
    assert!(!non_test_code("fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::sim::Engine;\n}").contains("crate::sim"));
    // A test-only module declared by name hides only itself, not the code after it.
    let decl = non_test_code("#[cfg(test)]\nmod kunit;\nuse crate::sim::Engine;");
    assert!(decl.contains("crate::sim") && !decl.contains("kunit"));
}
