//! What an icon may be: a PNG, ICO, GIF, JPEG or WebP image, by the content type its server
//! declares and by its leading bytes, both. SVG is refused: it can carry script and links, and
//! an icon is shown from the console's own origin.

/// An accepted format: the content type the stored copy is served with, the types a server may
/// declare for it, and its signature (bytes at offsets).
struct Format {
    content_type: &'static str,
    declared: &'static [&'static str],
    signature: &'static [(usize, &'static [u8])],
}

const FORMATS: &[Format] = &[
    Format {
        content_type: "image/png",
        declared: &["image/png"],
        signature: &[(0, b"\x89PNG\r\n\x1a\n")],
    },
    Format {
        content_type: "image/x-icon",
        declared: &[
            "image/x-icon",
            "image/vnd.microsoft.icon",
            "image/ico",
            "image/icon",
        ],
        signature: &[(0, b"\0\0\x01\0")],
    },
    Format {
        content_type: "image/gif",
        declared: &["image/gif"],
        signature: &[(0, b"GIF8"), (5, b"a")],
    },
    Format {
        content_type: "image/jpeg",
        declared: &["image/jpeg", "image/jpg", "image/pjpeg"],
        signature: &[(0, b"\xff\xd8\xff")],
    },
    Format {
        content_type: "image/webp",
        declared: &["image/webp"],
        signature: &[(0, b"RIFF"), (8, b"WEBP")],
    },
];

/// Why an answer is not an icon.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAnIcon {
    #[error("its content type {0:?} is not that of a PNG, ICO, GIF, JPEG or WebP image")]
    DeclaredType(String),
    #[error("its bytes are not a PNG, ICO, GIF, JPEG or WebP image")]
    Bytes,
}

/// The content type to store `bytes` with, when the server's `declared` type (a
/// `Content-Type` value) names an accepted image format and the bytes are one. A server may
/// name one format and send another (a PNG served as `favicon.ico`): the bytes decide which.
pub fn content_type(declared: &str, bytes: &[u8]) -> Result<&'static str, NotAnIcon> {
    let essence = declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !FORMATS
        .iter()
        .any(|f| f.declared.contains(&essence.as_str()))
    {
        return Err(NotAnIcon::DeclaredType(essence));
    }
    FORMATS
        .iter()
        .find(|f| {
            f.signature
                .iter()
                .all(|(at, s)| bytes.get(*at..*at + s.len()) == Some(*s))
        })
        .map(|f| f.content_type)
        .ok_or(NotAnIcon::Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_icon_needs_an_image_type_and_the_bytes_of_one() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let cases: &[(&str, &[u8], Result<&str, NotAnIcon>)] = &[
            ("image/png", png, Ok("image/png")),
            ("Image/PNG; charset=binary", png, Ok("image/png")),
            ("image/x-icon", png, Ok("image/png")),
            (
                "image/vnd.microsoft.icon",
                b"\0\0\x01\0\x01\0",
                Ok("image/x-icon"),
            ),
            ("image/gif", b"GIF89a\x01\0", Ok("image/gif")),
            ("image/gif", b"GIF87a\x01\0", Ok("image/gif")),
            (
                "image/jpeg",
                b"\xff\xd8\xff\xe0\0\x10JFIF",
                Ok("image/jpeg"),
            ),
            ("image/webp", b"RIFF\x24\0\0\0WEBPVP8 ", Ok("image/webp")),
            (
                "image/svg+xml",
                b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
                Err(NotAnIcon::DeclaredType("image/svg+xml".into())),
            ),
            (
                "image/png",
                b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
                Err(NotAnIcon::Bytes),
            ),
            (
                "text/html",
                png,
                Err(NotAnIcon::DeclaredType("text/html".into())),
            ),
            ("", png, Err(NotAnIcon::DeclaredType(String::new()))),
            ("image/png", b"<!doctype html>", Err(NotAnIcon::Bytes)),
            ("image/png", b"\x89PN", Err(NotAnIcon::Bytes)),
            ("image/webp", b"RIFF\x24\0\0\0WAVE", Err(NotAnIcon::Bytes)),
            ("image/gif", b"GIF8", Err(NotAnIcon::Bytes)),
            ("image/png", b"", Err(NotAnIcon::Bytes)),
        ];
        for (declared, bytes, expected) in cases {
            assert_eq!(
                &content_type(declared, bytes),
                expected,
                "{declared} {bytes:?}"
            );
        }
    }
}
