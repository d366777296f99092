//! Deletion vectors for Python. Positions go in and out as Arrow arrays through the
//! Arrow C data interface (numpy arrays through `pyarrow.array`, zero-copy for int64);
//! file I/O and bitmap work run without the GIL.

use std::sync::Arc;

use arrow::array::{make_array, Array, ArrayData, ArrayRef, AsArray, BooleanArray, Int64Array};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Int64Type};
use arrow::pyarrow::{FromPyArrow, ToPyArrow};
use icefloe::puffin::{
    read_deletion_vector, read_entry_deletion_vector, write_deletion_vectors, DeletionVector,
    DvEntry,
};
use icefloe::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::IntoPyResult;
use crate::fileio::{io_for, PyFileIO};

/// The deleted row positions of one data file (an Iceberg v3 deletion vector). Immutable.
#[pyclass(frozen, module = "icefloe._native", name = "DeletionVector")]
pub struct PyDeletionVector {
    pub inner: Arc<DeletionVector>,
}

impl PyDeletionVector {
    fn wrap(dv: DeletionVector) -> Self {
        PyDeletionVector {
            inner: Arc::new(dv),
        }
    }
}

/// Adds the positions of one Arrow integer array (no nulls; signed or unsigned).
fn add_arrow_positions(dv: &mut DeletionVector, array: &ArrayRef) -> icefloe::Result<()> {
    if array.null_count() > 0 {
        return Err(Error::invalid_argument(
            "row positions must not contain nulls",
        ));
    }
    let dt = array.data_type();
    if !dt.is_integer() {
        return Err(Error::invalid_argument(format!(
            "row positions must be integers, got an array of {dt}"
        )));
    }
    let longs = if *dt == DataType::Int64 {
        array.clone()
    } else {
        // unsafe cast options: an unsigned value above 2^63 - 1 fails instead of becoming null
        let opts = CastOptions {
            safe: false,
            ..Default::default()
        };
        cast_with_options(array, &DataType::Int64, &opts)
            .map_err(|e| Error::invalid_argument(format!("row positions do not fit a long: {e}")))?
    };
    dv.insert_all(longs.as_primitive::<Int64Type>().values().iter().copied())
}

/// Positions from: a pyarrow Array or ChunkedArray, a numpy array, or any iterable of ints.
fn positions_dv(py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<DeletionVector> {
    let mut arrays: Vec<ArrayRef> = Vec::new();
    if positions.hasattr("__arrow_c_array__")? {
        arrays.push(make_array(ArrayData::from_pyarrow_bound(positions)?));
    } else if positions.hasattr("chunks")? && positions.hasattr("__arrow_c_stream__")? {
        for chunk in positions.getattr("chunks")?.try_iter()? {
            arrays.push(make_array(ArrayData::from_pyarrow_bound(&chunk?)?));
        }
    } else if positions.hasattr("__array__")? && positions.hasattr("dtype")? {
        // numpy (and array-likes with a dtype): pyarrow wraps int64 buffers without copying
        let pa = py.import("pyarrow")?;
        let array = pa.call_method1("array", (positions,))?;
        arrays.push(make_array(ArrayData::from_pyarrow_bound(&array)?));
    } else {
        let mut longs = Vec::new();
        for item in positions.try_iter()? {
            longs.push(item?.extract::<i64>()?);
        }
        return py.detach(|| DeletionVector::from_positions(longs)).py(py);
    }
    py.detach(|| {
        let mut dv = DeletionVector::new();
        for array in &arrays {
            add_arrow_positions(&mut dv, array)?;
        }
        Ok(dv)
    })
    .py(py)
}

#[pymethods]
impl PyDeletionVector {
    /// A deletion vector holding `positions` (empty when omitted).
    #[new]
    #[pyo3(signature = (positions = None))]
    fn new(py: Python<'_>, positions: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match positions {
            Some(p) => Ok(Self::wrap(positions_dv(py, p)?)),
            None => Ok(Self::wrap(DeletionVector::new())),
        }
    }

    /// From row positions: a pyarrow integer Array or ChunkedArray, a numpy integer
    /// array, or an iterable of ints. Negative positions raise InvalidArgumentError.
    #[staticmethod]
    fn from_positions(py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self::wrap(positions_dv(py, positions)?))
    }

    /// Reads the `deletion-vector-v1` blob at `offset` / `length` of a Puffin file (the
    /// `content_offset` / `content_size_in_bytes` of its manifest entry).
    /// Read through `io` (default: the FileIO for the path's scheme).
    #[staticmethod]
    #[pyo3(signature = (path, offset, length, *, io = None))]
    fn read(
        py: Python<'_>,
        path: &str,
        offset: u64,
        length: u64,
        io: Option<&PyFileIO>,
    ) -> PyResult<Self> {
        py.detach(|| read_deletion_vector(io_for(io, path)?.as_ref(), path, offset, length))
            .py(py)
            .map(Self::wrap)
    }

    /// Reads the DV of a delete file's manifest entry and checks it against the entry:
    /// its cardinality must be `record_count`, and the Puffin footer must describe a
    /// deletion vector at `offset` of `length` bytes for `referenced_data_file`.
    /// `file_size` (`file_size_in_bytes`) saves a look-up. Read through `io` (default: the
    /// FileIO for the path's scheme).
    #[staticmethod]
    #[pyo3(signature = (path, offset, length, record_count, referenced_data_file, file_size = None, *, io = None))]
    #[allow(clippy::too_many_arguments)]
    fn read_for_entry(
        py: Python<'_>,
        path: &str,
        offset: u64,
        length: u64,
        record_count: i64,
        referenced_data_file: Option<&str>,
        file_size: Option<u64>,
        io: Option<&PyFileIO>,
    ) -> PyResult<Self> {
        let entry = DvEntry {
            location: path,
            offset,
            length,
            record_count,
            referenced_data_file,
            file_size,
        };
        py.detach(|| read_entry_deletion_vector(io_for(io, path)?.as_ref(), &entry))
            .py(py)
            .map(Self::wrap)
    }

    /// Parses a whole `deletion-vector-v1` blob (length, magic, vector, CRC).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.detach(|| DeletionVector::deserialize(data))
            .py(py)
            .map(Self::wrap)
    }

    /// The `deletion-vector-v1` blob bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = Arc::clone(&self.inner);
        let bytes = py.detach(move || inner.serialize()).py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The number of deleted positions.
    #[getter]
    fn cardinality(&self) -> u64 {
        self.inner.cardinality()
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.inner.cardinality()).unwrap_or(usize::MAX)
    }

    /// Whether row `pos` is deleted.
    fn contains(&self, pos: i64) -> bool {
        self.inner.contains(pos)
    }

    fn __contains__(&self, pos: &Bound<'_, PyAny>) -> bool {
        pos.extract::<i64>()
            .map(|p| self.inner.contains(p))
            .unwrap_or(false)
    }

    /// The deleted positions, ascending, as a pyarrow Int64Array.
    fn positions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let inner = Arc::clone(&self.inner);
        let array = py.detach(move || Int64Array::from_iter_values(inner.iter()));
        Ok(array.to_data().to_pyarrow(py)?.unbind())
    }

    /// For rows `[start, start + length)`: a pyarrow BooleanArray, true where the row is
    /// kept (not deleted) — a filter for a batch of rows read from the data file.
    fn keep_mask(&self, py: Python<'_>, start: u64, length: usize) -> PyResult<Py<PyAny>> {
        let inner = Arc::clone(&self.inner);
        let array =
            py.detach(move || BooleanArray::new(inner.keep_mask_buffer(start, length), None));
        Ok(array.to_data().to_pyarrow(py)?.unbind())
    }

    /// A new vector with the positions of both.
    fn merge(&self, py: Python<'_>, other: &PyDeletionVector) -> Self {
        let (a, b) = (Arc::clone(&self.inner), Arc::clone(&other.inner));
        Self::wrap(py.detach(move || {
            let mut dv = (*a).clone();
            dv.merge(&b);
            dv
        }))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDeletionVector>()
            .map(|o| *o.get().inner == *self.inner)
            .unwrap_or(false)
    }

    fn __repr__(&self) -> String {
        let first: Vec<String> = self.inner.iter().take(6).map(|p| p.to_string()).collect();
        let more = if self.inner.cardinality() > 5 {
            ", ..."
        } else {
            ""
        };
        let shown = first.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        format!(
            "DeletionVector(cardinality={}, positions=[{shown}{more}])",
            self.inner.cardinality()
        )
    }
}

/// Writes a new Puffin file with one deletion vector per data file; returns, per data
/// file, what its manifest entry needs: `referenced_data_file`, `offset` and `length`
/// (`content_offset`, `content_size_in_bytes`) and `cardinality` (`record_count`).
/// Written through `io` (default: the FileIO for the path's scheme).
#[pyfunction]
#[pyo3(name = "write_deletion_vectors", signature = (path, vectors, *, io = None))]
fn write_deletion_vectors_py<'py>(
    py: Python<'py>,
    path: &str,
    vectors: &Bound<'py, PyDict>,
    io: Option<&PyFileIO>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut items: Vec<(String, Arc<DeletionVector>)> = Vec::with_capacity(vectors.len());
    for (k, v) in vectors.iter() {
        let dv = v.cast::<PyDeletionVector>()?;
        items.push((k.extract::<String>()?, Arc::clone(&dv.get().inner)));
    }
    let refs = py
        .detach(|| {
            write_deletion_vectors(
                io_for(io, path)?.as_ref(),
                path,
                items.iter().map(|(k, dv)| (k.as_str(), dv.as_ref())),
            )
        })
        .py(py)?;
    refs.into_iter()
        .map(|r| {
            let d = PyDict::new(py);
            d.set_item("referenced_data_file", r.referenced_data_file)?;
            d.set_item("offset", r.offset)?;
            d.set_item("length", r.length)?;
            d.set_item("cardinality", r.cardinality)?;
            Ok(d)
        })
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDeletionVector>()?;
    m.add_function(wrap_pyfunction!(write_deletion_vectors_py, m)?)?;
    Ok(())
}
