//! `model.safetensors` read one tensor at a time.
//!
//! Why not read the file whole: the encoder keeps every weight in 8 bits,
//! a quarter of the file's `f32` bytes, and a process's peak memory is
//! what a server is judged by. Reading all 90 MB of all-MiniLM-L6-v2 to
//! build 23 MB of tables put the peak at both; read tensor by tensor (the
//! word-piece table, half the model, in slices of rows) the peak is the
//! tables plus one slice.
//!
//! The format: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the data.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;

/// A header larger than this is not a model's: the header of a BERT
/// with a few hundred tensors is some tens of kilobytes.
const MAX_HEADER: u64 = 64 << 20;

/// Bytes read at a time from a large tensor.
const SLICE: usize = 1 << 20;

#[derive(Debug, Clone, Copy)]
enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }

    /// Values of this type, little-endian in `bytes`, appended as `f32`.
    fn widen(self, bytes: &[u8], into: &mut Vec<f32>) {
        match self {
            Dtype::F32 => into.extend(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            ),
            Dtype::F16 => into.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()),
            ),
            Dtype::Bf16 => into.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()),
            ),
        }
    }
}

#[derive(Debug)]
struct Entry {
    dtype: Dtype,
    shape: Vec<usize>,
    /// Absolute offsets in the file.
    begin: u64,
    end: u64,
}

impl Entry {
    fn values(&self) -> usize {
        self.shape.iter().product()
    }
}

#[derive(Deserialize)]
struct RawEntry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [u64; 2],
}

/// An open `model.safetensors` and the index of its tensors.
pub(crate) struct Safetensors {
    file: File,
    tensors: HashMap<String, Entry>,
}

impl Safetensors {
    /// Reads the header; the data stays on disk until a tensor is asked
    /// for. Errors say what is wrong with the file, for the caller to
    /// name it.
    pub(crate) fn open(path: &Path) -> Result<Safetensors, String> {
        let mut file = File::open(path).map_err(|e| e.to_string())?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|_| "shorter than a safetensors header".to_string())?;
        let len = u64::from_le_bytes(len);
        if len > MAX_HEADER || 8 + len > size {
            return Err(format!(
                "not a safetensors file (a header of {len} bytes in a file of {size})"
            ));
        }
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header).map_err(|e| e.to_string())?;
        let raw: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| format!("its header is not safetensors JSON: {e}"))?;
        let start = 8 + len;
        let mut tensors = HashMap::with_capacity(raw.len());
        for (name, value) in raw {
            if name == "__metadata__" {
                continue;
            }
            let e: RawEntry = serde_json::from_value(value)
                .map_err(|e| format!("tensor {name}: its header entry is malformed: {e}"))?;
            let dtype = match e.dtype.as_str() {
                "F32" => Dtype::F32,
                "F16" => Dtype::F16,
                "BF16" => Dtype::Bf16,
                // Integer tensors (position ids kept as buffers) are not
                // weights; a weight the encoder needs in such a type is
                // reported as missing when it is asked for.
                _ => continue,
            };
            let [from, to] = e.data_offsets;
            let entry = Entry {
                dtype,
                shape: e.shape,
                begin: start + from,
                end: start + to,
            };
            let bytes = entry.values().checked_mul(dtype.size());
            if from > to || entry.end > size || bytes != Some((to - from) as usize) {
                return Err(format!(
                    "tensor {name}: bytes {from}..{to} do not hold its shape {:?} in {}, or lie past the file's end",
                    entry.shape, e.dtype
                ));
            }
            tensors.insert(name, entry);
        }
        Ok(Safetensors { file, tensors })
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    /// The size of a tensor's first dimension (0 for one not there).
    pub(crate) fn rows(&self, name: &str) -> usize {
        self.tensors
            .get(name)
            .and_then(|e| e.shape.first().copied())
            .unwrap_or(0)
    }

    fn entry(&self, name: &str, len: usize) -> Result<&Entry, String> {
        let e = self.tensors.get(name).ok_or("missing")?;
        if e.values() != len {
            return Err(format!("{} values where {len} were expected", e.values()));
        }
        Ok(e)
    }

    /// The `len` values of tensor `name`, as `f32`.
    pub(crate) fn read(&self, name: &str, len: usize) -> Result<Vec<f32>, String> {
        let mut out = Vec::with_capacity(len);
        self.read_rows(name, len, len.max(1), |rows| out.extend_from_slice(rows))?;
        Ok(out)
    }

    /// Tensor `name` (`len` values) handed to `f` in slices of whole rows
    /// of `width` values, in order, each slice about [`SLICE`] bytes.
    pub(crate) fn read_rows(
        &self,
        name: &str,
        len: usize,
        width: usize,
        mut f: impl FnMut(&[f32]),
    ) -> Result<(), String> {
        let e = self.entry(name, len)?;
        if width == 0 || !len.is_multiple_of(width) {
            return Err(format!("{len} values are not rows of {width}"));
        }
        let row_bytes = width * e.dtype.size();
        let per_slice = (SLICE / row_bytes).max(1) * row_bytes;
        let mut file = &self.file;
        file.seek(SeekFrom::Start(e.begin))
            .map_err(|err| err.to_string())?;
        let mut bytes = vec![0u8; per_slice.min((e.end - e.begin) as usize)];
        let mut values = Vec::with_capacity(bytes.len() / e.dtype.size());
        let mut left = (e.end - e.begin) as usize;
        while left > 0 {
            let n = left.min(per_slice);
            file.read_exact(&mut bytes[..n])
                .map_err(|err| format!("the file ends inside it: {err}"))?;
            values.clear();
            e.dtype.widen(&bytes[..n], &mut values);
            f(&values);
            left -= n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(header: &str, data: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
        f.write_all(header.as_bytes()).unwrap();
        f.write_all(data).unwrap();
        f
    }

    #[test]
    fn tensors_of_each_float_type_read_back_as_f32() {
        let mut data = Vec::new();
        for v in [1.5f32, -2.0, 0.25] {
            data.extend(v.to_le_bytes());
        }
        for v in [3.0f32, -0.5] {
            data.extend(half::f16::from_f32(v).to_le_bytes());
        }
        for v in [7.0f32, 0.125] {
            data.extend(half::bf16::from_f32(v).to_le_bytes());
        }
        let header = r#"{"__metadata__":{"format":"pt"},
            "a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},
            "b":{"dtype":"F16","shape":[2,1],"data_offsets":[12,16]},
            "c":{"dtype":"BF16","shape":[2],"data_offsets":[16,20]},
            "ids":{"dtype":"I64","shape":[0],"data_offsets":[20,20]}}"#;
        let f = file_with(header, &data);
        let st = Safetensors::open(f.path()).unwrap();
        assert_eq!(st.read("a", 3).unwrap(), vec![1.5, -2.0, 0.25]);
        assert_eq!(st.read("b", 2).unwrap(), vec![3.0, -0.5]);
        assert_eq!(st.read("c", 2).unwrap(), vec![7.0, 0.125]);
        assert_eq!(st.rows("b"), 2);
        assert!(!st.contains("ids"));
        assert_eq!(
            st.read("a", 4).unwrap_err(),
            "3 values where 4 were expected"
        );
        assert_eq!(st.read("z", 1).unwrap_err(), "missing");
    }

    #[test]
    fn a_large_tensor_comes_in_slices_of_whole_rows() {
        let (rows, width) = (3000usize, 384usize);
        let values: Vec<f32> = (0..rows * width).map(|i| i as f32).collect();
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let header = format!(
            r#"{{"w":{{"dtype":"F32","shape":[{rows},{width}],"data_offsets":[0,{}]}}}}"#,
            data.len()
        );
        let f = file_with(&header, &data);
        let st = Safetensors::open(f.path()).unwrap();
        let mut seen = Vec::new();
        let mut slices = 0;
        st.read_rows("w", rows * width, width, |s| {
            assert_eq!(s.len() % width, 0);
            slices += 1;
            seen.extend_from_slice(s);
        })
        .unwrap();
        assert!(slices > 1, "{slices}");
        assert_eq!(seen, values);
    }

    #[test]
    fn a_file_that_is_not_safetensors_is_refused_with_the_reason() {
        let f = file_with("{not json", &[]);
        let err = Safetensors::open(f.path()).err().unwrap();
        assert!(err.contains("not safetensors JSON"), "{err}");
        let f = file_with(
            r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &[0; 8],
        );
        let err = Safetensors::open(f.path()).err().unwrap();
        assert!(err.contains("tensor a"), "{err}");
        let mut short = tempfile::NamedTempFile::new().unwrap();
        short.write_all(&[1, 2, 3]).unwrap();
        let err = Safetensors::open(short.path()).err().unwrap();
        assert!(err.contains("shorter"), "{err}");
    }
}
