//! Photos and images sent to the bot: which file of a message to fetch (the largest size of a
//! photo within agent-loop's image limit, or a document whose type is an image), the text of
//! its turn (the caption), and the fetch itself (`getFile`, then the download, capped at the
//! limit), checked as `--image` files are. What cannot become an image is a reply saying why,
//! before anything is downloaded where the message already says so.

use agent_loop::chat::Image;
use agent_loop::chat::MAX_IMAGE_BYTES;

use super::api::{Api, Message};

/// The text of a turn whose photos came without a caption.
pub const NO_CAPTION: &str = "(photo)";

/// The types the model APIs take, as a sender may name them (the bytes decide in the end).
const TAKEN: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/jpg",
    "image/gif",
    "image/webp",
];

/// A file to fetch for a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub file_id: String,
    /// What the log and errors call it.
    pub name: String,
}

/// The photos of one message (or of an album), not fetched yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Photos {
    pub captions: Vec<String>,
    pub files: Vec<Attachment>,
    /// The album (`media_group_id`) they belong to.
    pub group: Option<String>,
}

impl Photos {
    /// Another message of the same album joins this turn.
    pub fn join(&mut self, more: Photos) {
        self.captions.extend(more.captions);
        self.files.extend(more.files);
    }

    /// The turn's text: the captions, or [`NO_CAPTION`].
    pub fn text(&self) -> String {
        match self.captions.is_empty() {
            true => NO_CAPTION.to_string(),
            false => self.captions.join("\n\n"),
        }
    }
}

/// The photo or image `message` carries: `None` when it has none, an error (the reply) when
/// it has one the model cannot take.
pub fn photos(message: &Message) -> Option<Result<Photos, String>> {
    let file = match (&message.photo, &message.document) {
        (Some(sizes), _) => largest(sizes),
        (None, Some(document)) => image_document(document),
        (None, None) => return None,
    };
    Some(file.map(|file| {
        Photos {
            captions: message
                .caption
                .iter()
                .filter(|c| !c.trim().is_empty())
                .cloned()
                .collect(),
            files: vec![file],
            group: message.media_group_id.clone(),
        }
    }))
}

fn over() -> String {
    format!(
        "Not sent to the model: the image is over the {} MiB an image may have.",
        MAX_IMAGE_BYTES / (1024 * 1024)
    )
}

/// The largest size of a photo within the limit (a size of unknown length is tried).
fn largest(sizes: &[super::api::PhotoSize]) -> Result<Attachment, String> {
    sizes
        .iter()
        .filter(|s| s.file_size.is_none_or(|n| n <= MAX_IMAGE_BYTES as u64))
        .max_by_key(|s| s.width * s.height)
        .map(|s| Attachment {
            file_id: s.file_id.clone(),
            name: "photo".into(),
        })
        .ok_or_else(over)
}

fn image_document(document: &super::api::Document) -> Result<Attachment, String> {
    let mime = document.mime_type.as_deref().unwrap_or("of no type");
    if !mime.starts_with("image/") {
        return Err(format!(
            "Not sent to the model: the bot takes text, photos and images (PNG, JPEG, GIF, \
             WebP); this file is {}.",
            shown(mime)
        ));
    }
    if !TAKEN.contains(&mime) {
        return Err(format!(
            "Not sent to the model: {} is not a PNG, JPEG, GIF or WebP image, the types the \
             model APIs take. Sent as a photo, Telegram makes it a JPEG.",
            shown(mime)
        ));
    }
    if document
        .file_size
        .is_some_and(|n| n > MAX_IMAGE_BYTES as u64)
    {
        return Err(over());
    }
    let name = document
        .file_name
        .as_deref()
        .map(shown)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "image".into());
    Ok(Attachment {
        file_id: document.file_id.clone(),
        name,
    })
}

/// A name or type from the sender, fit to show: no control or invisible characters, cut.
fn shown(text: &str) -> String {
    text.chars()
        .filter(|c| !agent_loop::text::shown::hides(*c))
        .take(100)
        .collect()
}

/// Fetches `files` and checks each as an image; the error is the reply.
pub async fn fetch(api: &Api, files: &[Attachment]) -> Result<Vec<Image>, String> {
    let mut images = Vec::new();
    for file in files {
        let failed = |why: String| format!("Not sent to the model: {}: {why}", file.name);
        let found = api
            .get_file(&file.file_id)
            .await
            .map_err(|e| failed(format!("getFile: {e}")))?;
        let path = found.file_path.ok_or_else(|| {
            failed(
                "Telegram gave no path to download it from (a file over the Bot API's 20 MB?)"
                    .into(),
            )
        })?;
        let data = api.download(&path, MAX_IMAGE_BYTES).await.map_err(failed)?;
        let image = Image::from_bytes(data, Some(file.name.clone()))
            .map_err(|e| format!("Not sent to the model: {}", e.message))?;
        images.push(image);
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(json: serde_json::Value) -> Message {
        let mut base = serde_json::json!({"message_id": 1, "chat": {"id": 1}});
        base.as_object_mut()
            .unwrap()
            .extend(json.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn the_largest_size_within_the_limit_is_taken() {
        let m = message(serde_json::json!({"caption": "what is it?", "photo": [
            {"file_id": "s", "width": 90, "height": 60, "file_size": 900},
            {"file_id": "m", "width": 800, "height": 600},
            {"file_id": "l", "width": 2560, "height": 1920, "file_size": MAX_IMAGE_BYTES + 1},
        ]}));
        let photos = photos(&m).unwrap().unwrap();
        assert_eq!(photos.files[0].file_id, "m");
        assert_eq!(photos.text(), "what is it?");
        let big = message(serde_json::json!({"photo": [
            {"file_id": "l", "width": 2560, "height": 1920, "file_size": MAX_IMAGE_BYTES + 1},
        ]}));
        assert!(photos_of(&big).unwrap_err().contains("over the 5 MiB"));
    }

    fn photos_of(m: &Message) -> Result<Photos, String> {
        photos(m).unwrap()
    }

    #[test]
    fn documents_by_their_type() {
        let doc = |mime: &str, name: &str| {
            message(serde_json::json!({"document":
                {"file_id": "d", "mime_type": mime, "file_name": name, "file_size": 10}}))
        };
        let png = photos_of(&doc("image/png", "shot\u{202e}.png")).unwrap();
        assert_eq!(png.files[0].name, "shot.png");
        assert_eq!(png.text(), NO_CAPTION);
        let heic = photos_of(&doc("image/heic", "a.heic")).unwrap_err();
        assert!(heic.contains("image/heic is not a PNG"), "{heic}");
        let pdf = photos_of(&doc("application/pdf", "a.pdf")).unwrap_err();
        assert!(pdf.contains("this file is application/pdf"), "{pdf}");
        assert!(photos(&message(serde_json::json!({"text": "hi"}))).is_none());
    }
}
