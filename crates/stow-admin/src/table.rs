//! Aligned text tables for the human output of the list commands.

/// `header` and `rows` as columns padded to their widest cell, two spaces apart.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = vec![line(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// `-` for nothing.
pub(crate) fn or_dash(value: Option<String>) -> String {
    value
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_under_their_header() {
        let t = table(
            &["ID", "NAME", "PLAN"],
            &[
                vec!["org_1".into(), "Ünïcode RP".into(), "pro".into()],
                vec!["org_22".into(), "A".into(), "free".into()],
            ],
        );
        assert_eq!(
            t,
            "ID      NAME        PLAN\norg_1   Ünïcode RP  pro\norg_22  A           free"
        );
        assert_eq!(table(&["ID"], &[]), "ID");
        assert_eq!(or_dash(None), "-");
        assert_eq!(or_dash(Some(String::new())), "-");
    }
}

/// `1 object`, `2 objects`, `0 objects`: a count with the word that agrees with it.
pub(crate) fn counted(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod counted_tests {
    #[test]
    fn one_is_singular_and_everything_else_plural() {
        assert_eq!(super::counted(1, "object", "objects"), "1 object");
        assert_eq!(super::counted(0, "object", "objects"), "0 objects");
        assert_eq!(super::counted(2, "byte", "bytes"), "2 bytes");
    }
}
