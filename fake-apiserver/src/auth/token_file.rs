//! Static bearer tokens from a CSV file, the real server's `--token-auth-file`: one record a line,
//! `token,user,uid` and optionally a quoted, comma-separated list of groups
//! (`token,user,uid,"group1,group2"`). As in the real server, a record with fewer than three
//! columns fails the whole file, an empty token is skipped, and a repeated token keeps its last
//! record.

use std::collections::BTreeMap;
use std::path::Path;

use super::user::UserInfo;

/// Why a token file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("reading token file '{path}': {source}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A record had fewer than three columns.
    #[error("token file '{path}' must have at least 3 columns (token, user name, user uid), found {found}")]
    TooFewColumns {
        /// The file.
        path: String,
        /// How many columns the record had.
        found: usize,
    },
    /// A quoted field was not closed, or a quote appeared inside an unquoted field.
    #[error("token file '{path}': record on line {line}: {what}")]
    Syntax {
        /// The file.
        path: String,
        /// Line of the record.
        line: usize,
        /// What is wrong.
        what: &'static str,
    },
}

/// Tokens mapped to the users they authenticate (without `system:authenticated`, which the
/// authenticator adds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticTokens {
    tokens: BTreeMap<String, UserInfo>,
}

impl StaticTokens {
    /// Reads a token file.
    pub fn from_file(path: &Path) -> Result<Self, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// Parses a token file's text; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<Self, TokenFileError> {
        let mut tokens = BTreeMap::new();
        for (line, record) in csv_records(path, text)? {
            if record.len() < 3 {
                return Err(TokenFileError::TooFewColumns {
                    path: path.to_string(),
                    found: record.len(),
                });
            }
            if record[0].is_empty() {
                tracing::warn!(path, line, "empty token in token file, skipped");
                continue;
            }
            let groups = match record.get(3) {
                Some(groups) => groups.split(',').map(str::to_string).collect(),
                None => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                groups,
                extra: BTreeMap::new(),
            };
            if tokens.insert(record[0].clone(), user).is_some() {
                tracing::warn!(
                    path,
                    line,
                    "duplicate token in token file, the last one wins"
                );
            }
        }
        Ok(Self { tokens })
    }

    /// Adds (or replaces) one token.
    pub fn insert(&mut self, token: &str, user: UserInfo) {
        self.tokens.insert(token.to_string(), user);
    }

    /// The user a token authenticates.
    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.tokens.get(token)
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// Splits CSV text into records (with the line each starts on), as Go's `encoding/csv` does with
/// a variable number of fields: blank lines are skipped, a field may be quoted (`""` is a quote
/// inside it, and it may span lines).
fn csv_records(path: &str, text: &str) -> Result<Vec<(usize, Vec<String>)>, TokenFileError> {
    let syntax = |line, what| TokenFileError::Syntax {
        path: path.to_string(),
        line,
        what,
    };
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        // A blank line is no record.
        if matches!(chars.peek(), Some('\n' | '\r')) {
            if chars.next() == Some('\n') {
                line += 1;
            }
            continue;
        }
        let mut record = Vec::new();
        let mut field = String::new();
        loop {
            if chars.peek() == Some(&'"') && field.is_empty() {
                chars.next();
                loop {
                    match chars.next() {
                        None => {
                            return Err(syntax(start, "extraneous or missing \" in quoted-field"))
                        }
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                    }
                }
                if !matches!(chars.peek(), None | Some(',' | '\n' | '\r')) {
                    return Err(syntax(start, "extraneous or missing \" in quoted-field"));
                }
            }
            match chars.next() {
                None => {
                    record.push(std::mem::take(&mut field));
                    break;
                }
                Some(',') => record.push(std::mem::take(&mut field)),
                Some('\r') if chars.peek() == Some(&'\n') => {}
                Some('\n') => {
                    line += 1;
                    record.push(std::mem::take(&mut field));
                    break;
                }
                Some('"') => return Err(syntax(start, "bare \" in non-quoted-field")),
                Some(c) => field.push(c),
            }
        }
        records.push((start, record));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn parses_the_documented_format() {
        let tokens = StaticTokens::parse(
            "f",
            "t1,alice,u1,\"dev,ops\"\n\nt2,bob,u2\r\n,nobody,u3\nt1,carol,u4\n",
        )
        .unwrap();
        let carol = tokens.lookup("t1").unwrap();
        assert_eq!((carol.name.as_str(), carol.uid.as_str()), ("carol", "u4"));
        assert!(carol.groups.is_empty());
        let bob = tokens.lookup("t2").unwrap();
        assert_eq!(bob.name, "bob");
        assert!(tokens.lookup("").is_none());
        let alice = StaticTokens::parse("f", "t1,alice,u1,\"dev,ops\"").unwrap();
        assert_eq!(alice.lookup("t1").unwrap().groups, ["dev", "ops"]);
    }

    #[rstest]
    #[case(
        "t1,alice\n",
        "token file 'f' must have at least 3 columns (token, user name, user uid), found 2"
    )]
    #[case(
        "t1,\"alice,u1\n",
        "token file 'f': record on line 1: extraneous or missing \" in quoted-field"
    )]
    #[case(
        "t1,al\"ice,u1\n",
        "token file 'f': record on line 1: bare \" in non-quoted-field"
    )]
    fn refuses_malformed_files(#[case] text: &str, #[case] message: &str) {
        assert_eq!(
            StaticTokens::parse("f", text).unwrap_err().to_string(),
            message
        );
    }
}
