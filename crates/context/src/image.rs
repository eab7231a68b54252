//! Images attached to a user message: the bytes with their type read from the header (never
//! the file name), kept in the conversation (as base64 in session files) so that a resumed
//! session sends them again, and measured in tokens from their pixel size for the budget.

use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::Error;

/// The largest image one message may carry: Anthropic's limit per image, the smallest of the
/// APIs'; a bigger one would be refused by the API after the whole request was sent.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// One image of a user message.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime: String,
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
    /// Where it came from (a file name, an editor's URI), for the log and the display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image")
            .field("mime", &self.mime)
            .field("bytes", &self.data.len())
            .field("name", &self.name)
            .finish()
    }
}

impl Image {
    /// An image from its bytes; `name` says where they came from in errors. Its type is read
    /// from its header; anything but PNG, JPEG, GIF and WebP, or over the size cap, is refused.
    pub fn from_bytes(data: Vec<u8>, name: Option<String>) -> Result<Image, Error> {
        let what = name.as_deref().unwrap_or("the image");
        if data.len() > MAX_IMAGE_BYTES {
            return Err(Error::config(format!(
                "{what}: {} bytes is over the {} MiB an image may have",
                data.len(),
                MAX_IMAGE_BYTES / (1024 * 1024)
            )));
        }
        // The signature alone is not enough (a text file may start with PNG's): the header
        // must also give a size.
        let sized = imagesize::blob_size(&data).is_ok_and(|s| s.width > 0 && s.height > 0);
        let mime = match imagesize::image_type(&data) {
            Ok(imagesize::ImageType::Png) if sized && data.get(12..16) == Some(b"IHDR") => {
                "image/png"
            }
            Ok(imagesize::ImageType::Jpeg) if sized => "image/jpeg",
            Ok(imagesize::ImageType::Gif) if sized => "image/gif",
            Ok(imagesize::ImageType::Webp) if sized => "image/webp",
            _ => {
                return Err(Error::config(format!(
                    "{what}: not a PNG, JPEG, GIF or WebP image (read from its first bytes)"
                )))
            }
        };
        Ok(Image {
            mime: mime.to_string(),
            data,
            name,
        })
    }

    /// An image from its base64 text (what ACP clients send), checked as [`Image::from_bytes`].
    pub fn from_base64(text: &str, name: Option<String>) -> Result<Image, Error> {
        let what = name.as_deref().unwrap_or("the image");
        let data = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| Error::config(format!("{what}: its data is not base64: {e}")))?;
        Image::from_bytes(data, name)
    }

    /// The image in the file at `path`, named by its file name. Only a regular file: a FIFO
    /// would hang the read and a device (`/dev/zero`) would never end it; the read stops
    /// past the cap whatever the file's size says.
    pub fn read(path: &Path) -> Result<Image, Error> {
        use std::io::Read;
        let shown = path.display();
        let fail =
            |e: std::io::Error| Error::config(format!("{shown}: cannot read the image: {e}"));
        let over = |size: u64| {
            Error::config(format!(
                "{shown}: {size} bytes is over the {} MiB an image may have",
                MAX_IMAGE_BYTES / (1024 * 1024)
            ))
        };
        if !std::fs::metadata(path).map_err(fail)?.is_file() {
            return Err(Error::config(format!(
                "{shown}: not a regular file (a FIFO, a device or a folder is not an image)"
            )));
        }
        let file = std::fs::File::open(path).map_err(fail)?;
        // Checked again on what was opened: the name may have been swapped meanwhile.
        let meta = file.metadata().map_err(fail)?;
        if !meta.is_file() {
            return Err(Error::config(format!("{shown}: not a regular file")));
        }
        if meta.len() > MAX_IMAGE_BYTES as u64 {
            return Err(over(meta.len()));
        }
        let mut data = Vec::new();
        file.take(MAX_IMAGE_BYTES as u64 + 1)
            .read_to_end(&mut data)
            .map_err(fail)?;
        if data.len() > MAX_IMAGE_BYTES {
            return Err(over(data.len() as u64));
        }
        Image::from_bytes(data, Some(path.display().to_string()))
    }

    /// The bytes as standard base64.
    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }

    /// A `data:` URL of the image (OpenAI's `image_url`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64())
    }

    /// Its width and height in pixels, if the header says.
    pub fn pixels(&self) -> Option<(u64, u64)> {
        imagesize::blob_size(&self.data)
            .ok()
            .map(|s| (s.width as u64, s.height as u64))
    }

    /// The tokens it takes, from its pixel size ([`super::tokens::image_tokens`]).
    pub fn tokens(&self) -> u64 {
        super::tokens::image_tokens(self.pixels())
    }

    /// How a transcript shows it: `[image NAME (TYPE, N bytes)]`.
    pub fn label(&self) -> String {
        format!(
            "[image {}({}, {} bytes)]",
            self.name
                .as_deref()
                .map(|n| format!("{n} "))
                .unwrap_or_default(),
            self.mime,
            self.data.len()
        )
    }

    /// What the log and the display say of it: name, type and size, not the bytes.
    pub fn attached(&self) -> agent_loop_protocol::Attached {
        agent_loop_protocol::Attached {
            name: self.name.clone(),
            mime: self.mime.clone(),
            bytes: self.data.len() as u64,
        }
    }
}

/// The bytes as a base64 string in JSON.
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(data: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG header of `w` by `h` pixels (signature and IHDR; enough for the type and size).
    pub(crate) fn png(w: u32, h: u32) -> Vec<u8> {
        let mut data = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        data.extend(w.to_be_bytes());
        data.extend(h.to_be_bytes());
        data.extend([8, 6, 0, 0, 0, 0, 0, 0, 0]);
        data
    }

    #[test]
    fn type_and_tokens_come_from_the_header() {
        let image = Image::from_bytes(png(300, 250), Some("x.jpg".into())).unwrap();
        assert_eq!(image.mime, "image/png");
        assert_eq!(image.pixels(), Some((300, 250)));
        assert_eq!(image.tokens(), 100);
        let big = Image::from_bytes(png(4000, 3000), None).unwrap();
        assert_eq!(big.tokens(), super::super::tokens::MAX_IMAGE_TOKENS);
    }

    #[test]
    fn not_an_image_and_too_big_are_refused() {
        let e = Image::from_bytes(b"hello".to_vec(), Some("a.png".into())).unwrap_err();
        assert!(e.message.contains("a.png: not a PNG"), "{}", e.message);
        let mut huge = png(1, 1);
        huge.resize(MAX_IMAGE_BYTES + 1, 0);
        let e = Image::from_bytes(huge, Some("h.png".into())).unwrap_err();
        assert!(e.message.contains("h.png") && e.message.contains("5 MiB"));
    }

    #[test]
    fn kept_as_base64_in_json() {
        let image = Image::from_bytes(png(2, 2), None).unwrap();
        let json = serde_json::to_value(&image).unwrap();
        assert_eq!(json["data"], image.base64());
        assert!(json.get("name").is_none());
        let back: Image = serde_json::from_value(json).unwrap();
        assert_eq!(back, image);
        assert!(image.data_url().starts_with("data:image/png;base64,iVBOR"));
    }
}
