//! Writes the compact form of one of OpenAI's published encodings that agent-loop embeds
//! (crates/context/data/NAME.ranks.z, read by `context::exact`): from the `.tiktoken` file
//! OpenAI publishes (`https://openaipublic.blob.core.windows.net/encodings/NAME.tiktoken`,
//! one base64 token and its rank a line), each token's bytes in rank order after one byte of
//! length, zlib-compressed: about a quarter of the published file's size.
//!
//! `cargo run -p agent-loop-context --example tokenizer_data -- o200k_base.tiktoken crates/context/data/o200k_base.ranks.z`

use std::io::Write;

use base64::Engine;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(from), Some(to)) = (args.next(), args.next()) else {
        return Err("usage: tokenizer_data FILE.tiktoken OUT.ranks.z".into());
    };
    let text = std::fs::read_to_string(&from)?;
    let mut raw = Vec::new();
    for (line_no, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        let (token, rank) = line
            .split_once(' ')
            .ok_or_else(|| format!("{from}:{}: not `TOKEN RANK`", line_no + 1))?;
        let token = base64::engine::general_purpose::STANDARD.decode(token)?;
        // Ranks are dense and in order in the published files: the position is the rank.
        if rank.parse::<usize>()? != line_no {
            return Err(format!("{from}:{}: rank {rank} out of order", line_no + 1).into());
        }
        let len = u8::try_from(token.len())
            .map_err(|_| format!("{from}:{}: a token of over 255 bytes", line_no + 1))?;
        raw.push(len);
        raw.extend_from_slice(&token);
    }
    let mut out = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    out.write_all(&raw)?;
    std::fs::write(&to, out.finish()?)?;
    Ok(())
}
