//! The AWS CLI's shared files (`~/.aws/credentials`, `~/.aws/config`): the profile the
//! environment names (`AWS_PROFILE`, else `AWS_DEFAULT_PROFILE`, else `default`) gives the
//! credentials, the region and the endpoint the environment does not, as the AWS SDKs read
//! them — variables first, then the credentials file, then the config file. A profile that
//! gets its credentials from a program, a role or SSO is named with the command that exports
//! them: a2c runs no program a file names.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::net::settings::CloudVariables;

/// The `AWS_*` variables as the session read them, and where the AWS CLI's shared files are
/// (read only when a profile is needed); their `Debug` names the variables only.
#[derive(Clone, Default)]
pub(in crate::registry) struct AwsVariables {
    pub vars: Vec<(String, String)>,
    /// `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`.
    pub credentials_file: Option<PathBuf>,
    /// `AWS_CONFIG_FILE`, else `~/.aws/config`.
    pub config_file: Option<PathBuf>,
    /// Where a profile's values in `vars` came from (`the profile `dev` in ~/.aws/credentials`),
    /// once one was read; for messages.
    pub profile: Option<String>,
}

impl AwsVariables {
    /// The session's `AWS_*` variables, and the shared files as the SDKs find them (by default
    /// in `home`).
    pub(super) fn of(aws: CloudVariables, home: Option<&Path>) -> Self {
        let dot_aws = home.map(|h| h.join(".aws"));
        let file = |variable: &str, name: &str| {
            aws.get(variable)
                .map(PathBuf::from)
                .or_else(|| dot_aws.as_ref().map(|d| d.join(name)))
        };
        Self {
            credentials_file: file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            config_file: file("AWS_CONFIG_FILE", "config"),
            vars: aws.vars,
            profile: None,
        }
    }

    /// The value of `name`, if set.
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Debug for AwsVariables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.vars.iter().map(|(k, _)| k)).finish()
    }
}

/// More than any hand-kept credentials file: a larger one is refused, never read whole.
const MAX_FILE: u64 = 1 << 20;

/// The keys of a profile that give credentials some other way than by value.
const INDIRECT: &[&str] = &[
    "credential_process",
    "role_arn",
    "sso_session",
    "sso_start_url",
    "web_identity_token_file",
];

/// What went wrong, and what to do.
#[derive(Debug)]
pub(super) struct ProfileError {
    pub message: String,
    pub hint: Option<String>,
}

/// `aws` with what its profile adds: each variable the environment leaves unset that the
/// profile sets (`aws_access_key_id` → `AWS_ACCESS_KEY_ID`, `region` → `AWS_REGION`,
/// `endpoint_url` → `AWS_ENDPOINT_URL`, an `s3 =` block's `endpoint_url` →
/// `AWS_ENDPOINT_URL_S3` and `addressing_style` → `AWS_VIRTUAL_HOSTED_STYLE_REQUEST`), and where
/// they came from in `profile`.
pub(super) fn with_profile(aws: &AwsVariables) -> Result<AwsVariables, ProfileError> {
    let named = aws.get("AWS_PROFILE").or_else(|| aws.get("AWS_DEFAULT_PROFILE"));
    let name = named.unwrap_or("default");
    let mut found: Vec<(&Path, Vec<(String, String)>)> = Vec::new();
    if let Some(path) = &aws.credentials_file
        && let Some(section) = read_section(path, name, false)?
    {
        found.push((path, section));
    }
    if let Some(path) = &aws.config_file
        && let Some(section) = read_section(path, name, true)?
    {
        found.push((path, section));
    }
    if found.is_empty() {
        return match named {
            // The environment's own credentials, or the instance's: no profile is needed.
            None => Ok(aws.clone()),
            Some(_) => Err(ProfileError {
                message: format!(
                    "{}=`{name}` names no profile in {} or {}",
                    if aws.get("AWS_PROFILE").is_some() {
                        "AWS_PROFILE"
                    } else {
                        "AWS_DEFAULT_PROFILE"
                    },
                    shown(aws.credentials_file.as_deref()),
                    shown(aws.config_file.as_deref())
                ),
                hint: Some(format!(
                    "add it with `aws configure --profile {name}`, or set AWS_PROFILE to a profile those files hold"
                )),
            }),
        };
    }
    // The credentials file first, as the AWS CLI reads them.
    let value = |key: &str| {
        found
            .iter()
            .find_map(|(path, section)| section.iter().find(|(k, _)| k == key).map(|(_, v)| (*path, v.as_str())))
    };
    let mut out = aws.clone();
    let from_environment = [
        "AWS_ACCESS_KEY_ID",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ]
    .iter()
    .any(|v| aws.get(v).is_some());
    if !from_environment {
        match (value("aws_access_key_id"), value("aws_secret_access_key")) {
            (Some((path, id)), Some((_, secret))) => {
                out.vars.push(("AWS_ACCESS_KEY_ID".into(), id.to_string()));
                out.vars.push(("AWS_SECRET_ACCESS_KEY".into(), secret.to_string()));
                if let Some((_, token)) = value("aws_session_token") {
                    out.vars.push(("AWS_SESSION_TOKEN".into(), token.to_string()));
                }
                out.profile = Some(format!("the profile `{name}` in {}", path.display()));
            }
            (Some((path, _)), None) | (None, Some((path, _))) => {
                return Err(ProfileError {
                    message: format!(
                        "the profile `{name}` in {} has only one of aws_access_key_id and aws_secret_access_key",
                        path.display()
                    ),
                    hint: Some(format!("set both with `aws configure --profile {name}`")),
                });
            }
            (None, None) => {
                if let Some((path, key)) = INDIRECT.iter().find_map(|k| value(k).map(|(p, _)| (p, *k))) {
                    return Err(ProfileError {
                        message: format!(
                            "the profile `{name}` in {} gets its credentials by `{key}`, which a2c does not follow (it runs no program and assumes no role a file names)",
                            path.display()
                        ),
                        hint: Some(format!(
                            "export them for this shell with `eval \"$(aws configure export-credentials --profile {name} --format env)\"`, then run a2c again"
                        )),
                    });
                }
            }
        }
    }
    for (key, variable) in [
        ("region", "AWS_REGION"),
        ("endpoint_url", "AWS_ENDPOINT_URL"),
        ("s3.endpoint_url", "AWS_ENDPOINT_URL_S3"),
    ] {
        let set = aws.get(variable).is_some() || (variable == "AWS_REGION" && aws.get("AWS_DEFAULT_REGION").is_some());
        if !set && let Some((_, v)) = value(key) {
            out.vars.push((variable.into(), v.to_string()));
        }
    }
    // An `s3 =` block's `addressing_style` (`auto` leaves the choice to the client: path-style).
    let hosted = match value("s3.addressing_style").map(|(_, v)| v) {
        Some("virtual") => Some("true"),
        Some("path") => Some("false"),
        _ => None,
    };
    if let Some(hosted) = hosted.filter(|_| aws.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST").is_none()) {
        out.vars
            .push(("AWS_VIRTUAL_HOSTED_STYLE_REQUEST".into(), hosted.into()));
    }
    out.vars.sort();
    Ok(out)
}

fn shown(path: Option<&Path>) -> String {
    path.map_or("(no home directory)".into(), |p| p.display().to_string())
}

/// The keys of the section of profile `name` in `path` (`[name]`; in the config file
/// `[profile name]`, or `[default]`), lower-cased, an indented block's keys as `block.key`;
/// `None` when the file or the section is absent.
fn read_section(path: &Path, name: &str, config: bool) -> Result<Option<Vec<(String, String)>>, ProfileError> {
    let unreadable = |why: String| ProfileError {
        message: format!("cannot read {}: {why}", path.display()),
        hint: Some("fix the file, or point AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE at another".into()),
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e.to_string())),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(unreadable(format!("it is larger than {MAX_FILE} bytes")));
    }
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
    Ok(section(&text, name, config))
}

/// The section of profile `name` in an INI `text` (see [`read_section`]).
fn section(text: &str, name: &str, config: bool) -> Option<Vec<(String, String)>> {
    let wanted = |header: &str| {
        let header = header.trim();
        match config {
            true if name == "default" => header == "default" || header == "profile default",
            true => header
                .strip_prefix("profile")
                .is_some_and(|rest| rest.starts_with(char::is_whitespace) && rest.trim() == name),
            false => header == name,
        }
    };
    let mut inside = false;
    let mut seen = false;
    let mut keys = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            inside = wanted(header);
            seen |= inside;
            block = None;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_string());
        let indented = line.starts_with(char::is_whitespace);
        match (indented, &block) {
            (true, Some(b)) => keys.push((format!("{b}.{key}"), value)),
            _ if value.is_empty() => block = Some(key),
            _ => {
                block = None;
                keys.push((key, value));
            }
        }
    }
    seen.then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aws(vars: &[(&str, &str)], credentials: Option<&Path>, config: Option<&Path>) -> AwsVariables {
        AwsVariables {
            vars: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            credentials_file: credentials.map(Path::to_path_buf),
            config_file: config.map(Path::to_path_buf),
            profile: None,
        }
    }

    #[test]
    fn sections_are_read_as_the_aws_cli_reads_them() {
        let config = "[default]\nregion = eu-west-1\n\n# a comment\n[profile dev]\nregion=us-east-2\ns3 =\n  endpoint_url = https://s3.example\n  addressing_style = path\nendpoint_url = https://all.example\n[profile devx]\nregion = no\n";
        assert_eq!(
            section(config, "default", true).unwrap(),
            [("region".into(), "eu-west-1".into())]
        );
        assert_eq!(
            section(config, "dev", true).unwrap(),
            [
                ("region".to_string(), "us-east-2".to_string()),
                ("s3.endpoint_url".into(), "https://s3.example".into()),
                ("s3.addressing_style".into(), "path".into()),
                ("endpoint_url".into(), "https://all.example".into()),
            ]
        );
        // The credentials file has no `profile ` prefix; the config file's `[dev]` is not it.
        assert!(section("[profile dev]\na = b\n", "dev", false).is_none());
        assert!(section("[dev]\na = b\n", "dev", true).is_none());
        assert!(section(config, "nobody", true).is_none());
    }

    #[test]
    fn the_environment_comes_first_then_credentials_then_config() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &credentials,
            "[dev]\naws_access_key_id = AKIDFILE\naws_secret_access_key = s3cret\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[profile dev]\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = other\nregion = eu-north-1\n",
        )
        .unwrap();
        let got = with_profile(&aws(&[("AWS_PROFILE", "dev")], Some(&credentials), Some(&config))).unwrap();
        assert_eq!(got.get("AWS_ACCESS_KEY_ID"), Some("AKIDFILE"));
        assert_eq!(got.get("AWS_SECRET_ACCESS_KEY"), Some("s3cret"));
        assert_eq!(got.get("AWS_REGION"), Some("eu-north-1"));
        assert!(got.profile.unwrap().contains("`dev`"));
        let got = with_profile(&aws(
            &[
                ("AWS_PROFILE", "dev"),
                ("AWS_ACCESS_KEY_ID", "AKIDENV"),
                ("AWS_SECRET_ACCESS_KEY", "x"),
                ("AWS_DEFAULT_REGION", "us-west-2"),
            ],
            Some(&credentials),
            Some(&config),
        ))
        .unwrap();
        assert_eq!(got.get("AWS_ACCESS_KEY_ID"), Some("AKIDENV"));
        assert_eq!(
            got.get("AWS_REGION"),
            None,
            "AWS_DEFAULT_REGION is the environment's region"
        );
        assert!(got.profile.is_none());
    }

    #[test]
    fn an_s3_blocks_addressing_style_is_the_virtual_hosted_variable() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            "[profile v]
aws_access_key_id = AKID
aws_secret_access_key = x
s3 =
  endpoint_url = https://s3.example
  addressing_style = virtual
[profile p]
aws_access_key_id = AKID
aws_secret_access_key = x
s3 =
  addressing_style = path
",
        )
        .unwrap();
        let missing = dir.path().join("none");
        let read = |vars: &[(&str, &str)]| with_profile(&aws(vars, Some(&missing), Some(&config))).unwrap();
        let got = read(&[("AWS_PROFILE", "v")]);
        assert_eq!(got.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"), Some("true"));
        assert_eq!(got.get("AWS_ENDPOINT_URL_S3"), Some("https://s3.example"));
        let got = read(&[("AWS_PROFILE", "p")]);
        assert_eq!(got.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"), Some("false"));
        // The environment's choice comes first.
        let got = read(&[("AWS_PROFILE", "v"), ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "false")]);
        assert_eq!(got.get("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"), Some("false"));
    }

    #[test]
    fn what_a2c_cannot_follow_is_named_with_the_command_that_can() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(
            &config,
            "[profile sso]\nsso_session = corp\nregion = eu-west-1\n[profile half]\naws_access_key_id = AKID\n",
        )
        .unwrap();
        let missing = dir.path().join("none");
        let e = with_profile(&aws(&[("AWS_PROFILE", "sso")], Some(&missing), Some(&config)))
            .err()
            .unwrap();
        assert!(e.message.contains("`sso_session`"), "{}", e.message);
        assert!(
            e.hint
                .unwrap()
                .contains("aws configure export-credentials --profile sso --format env")
        );
        let e = with_profile(&aws(&[("AWS_PROFILE", "half")], Some(&missing), Some(&config)))
            .err()
            .unwrap();
        assert!(e.message.contains("only one of"), "{}", e.message);
        let e = with_profile(&aws(&[("AWS_PROFILE", "gone")], Some(&missing), Some(&config)))
            .err()
            .unwrap();
        assert!(
            e.message.contains("AWS_PROFILE=`gone` names no profile"),
            "{}",
            e.message
        );
        // No profile named and none there: the environment's or the instance's credentials.
        let plain = aws(&[], Some(&missing), Some(&missing));
        assert!(with_profile(&plain).unwrap().vars.is_empty());
        // A file larger than any credentials file is refused, not read whole.
        std::fs::write(&config, vec![b'#'; MAX_FILE as usize + 1]).unwrap();
        let e = with_profile(&aws(&[], None, Some(&config))).err().unwrap();
        assert!(e.message.contains("larger than"), "{}", e.message);
    }
}
