//! `abc.txt` (edge client rule 7): one line per provider, `provider_domain, account_id,
//! relationship`. Read leniently, as ads.txt validators read their files (decisions.md,
//! "Edge"): the relationship in any case, `#` comments anywhere in a line, blank lines, extra
//! fields and a leading byte order mark ignored. Refused, with the line's number: a byte that is
//! not ASCII, fewer than three fields, an empty domain or account id, a relationship other than
//! `DIRECT` or `RESELLER`.

use std::fmt;

/// One provider line, as written back (`domain, account_id, RELATIONSHIP`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub domain: String,
    pub account_id: String,
    pub relationship: Relationship,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relationship {
    Direct,
    Reseller,
}

/// What makes a line unacceptable, with its number (from 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LineError {
    pub line: usize,
    pub message: &'static str,
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let relationship = match self.relationship {
            Relationship::Direct => "DIRECT",
            Relationship::Reseller => "RESELLER",
        };
        write!(f, "{}, {}, {relationship}", self.domain, self.account_id)
    }
}

/// Every record of the file, or every refused line.
pub fn parse(bytes: &[u8]) -> Result<Vec<Record>, Vec<LineError>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut records = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        match parse_line(line) {
            Ok(Some(record)) => records.push(record),
            Ok(None) => {}
            Err(message) => errors.push(LineError {
                line: index + 1,
                message,
            }),
        }
    }
    if errors.is_empty() {
        Ok(records)
    } else {
        Err(errors)
    }
}

/// A line's record; `None` for a blank or comment line.
fn parse_line(line: &[u8]) -> Result<Option<Record>, &'static str> {
    if !line.is_ascii() {
        return Err("only ASCII characters are allowed");
    }
    // ASCII checked: the bytes are text.
    let line = std::str::from_utf8(line).unwrap_or_default();
    let content = line.split('#').next().unwrap_or("").trim();
    if content.is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = content.split(',').map(str::trim).collect();
    let [domain, account_id, relationship, ..] = fields[..] else {
        return Err("a line needs three fields: provider domain, account id, relationship");
    };
    if domain.is_empty() || account_id.is_empty() {
        return Err("the provider domain and the account id must not be empty");
    }
    let relationship = if relationship.eq_ignore_ascii_case("DIRECT") {
        Relationship::Direct
    } else if relationship.eq_ignore_ascii_case("RESELLER") {
        Relationship::Reseller
    } else {
        return Err("the relationship must be DIRECT or RESELLER");
    };
    Ok(Some(Record {
        domain: domain.to_ascii_lowercase(),
        account_id: account_id.to_string(),
        relationship,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(domain: &str, account_id: &str, relationship: Relationship) -> Record {
        Record {
            domain: domain.into(),
            account_id: account_id.into(),
            relationship,
        }
    }

    #[test]
    fn lenient_reading_of_what_rule_7_allows() {
        let file = "\u{feff}# providers\n\
                    agentcard.example, acc_1, DIRECT\n\
                    \n\
                    Other.EXAMPLE,acc_2,reseller # a comment\r\n\
                    third.example, acc_3, Direct, extra, fields\n   \n#only a comment";
        assert_eq!(
            parse(file.as_bytes()),
            Ok(vec![
                record("agentcard.example", "acc_1", Relationship::Direct),
                record("other.example", "acc_2", Relationship::Reseller),
                record("third.example", "acc_3", Relationship::Direct),
            ])
        );
    }

    #[test]
    fn refused_lines_are_named_by_number() {
        let file = "ok.example, acc_1, DIRECT\n\
                    two.example, acc_2\n\
                    ,acc_3,DIRECT\n\
                    four.example, acc_4, PARTNER\n\
                    fünf.example, acc_5, DIRECT\n";
        let errors = parse(file.as_bytes()).unwrap_err();
        let lines: Vec<(usize, &str)> = errors.iter().map(|e| (e.line, e.message)).collect();
        assert_eq!(
            lines,
            [
                (
                    2,
                    "a line needs three fields: provider domain, account id, relationship"
                ),
                (
                    3,
                    "the provider domain and the account id must not be empty"
                ),
                (4, "the relationship must be DIRECT or RESELLER"),
                (5, "only ASCII characters are allowed"),
            ]
        );
    }

    #[test]
    fn a_record_is_written_back_in_its_canonical_form() {
        let line = record("agentcard.example", "acc_1", Relationship::Direct).to_string();
        assert_eq!(line, "agentcard.example, acc_1, DIRECT");
        assert_eq!(parse(line.as_bytes()).unwrap()[0].to_string(), line);
    }
}
