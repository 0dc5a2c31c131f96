//! Thin PyO3 binding of cartonize-core, compiled as `cartonize._core`:
//! converts, calls the core with the GIL released, maps errors.

use cartonize_core::CoreError;
use cartonize_render::RenderError;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

mod json_keys;
mod json_text;

/// Rust's allocations in the engine and renderer go to mimalloc (Python's own
/// objects keep Python's allocator): about 5 % less engine time on orders
/// (docs/benchmarks.md, "mimalloc").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _core,
    EngineError,
    PyValueError,
    "Any error raised by the packing engine."
);
create_exception!(
    _core,
    DecodeError,
    EngineError,
    "The engine input could not be decoded."
);
create_exception!(
    _core,
    InvalidInput,
    EngineError,
    "The engine input is invalid or contradictory."
);

/// Wraps the core's error so `?` converts it into the exception tree.
struct PyCoreError(CoreError);

impl From<CoreError> for PyCoreError {
    fn from(e: CoreError) -> Self {
        PyCoreError(e)
    }
}

impl From<PyCoreError> for PyErr {
    fn from(e: PyCoreError) -> PyErr {
        let msg = e.0.to_string();
        match e.0 {
            CoreError::Decode(_) => DecodeError::new_err(msg),
            // The request asks for more than its time allows: the caller's to change.
            CoreError::Invalid { .. } | CoreError::Timeout { .. } => InvalidInput::new_err(msg),
        }
    }
}

/// Wraps the renderer's error so `?` converts it into the same exception tree.
struct PyRenderError(RenderError);

impl From<RenderError> for PyRenderError {
    fn from(e: RenderError) -> Self {
        PyRenderError(e)
    }
}

impl From<PyRenderError> for PyErr {
    fn from(e: PyRenderError) -> PyErr {
        let msg = e.0.to_string();
        match e.0 {
            RenderError::Decode(_) => DecodeError::new_err(msg),
            RenderError::Invalid { .. } => InvalidInput::new_err(msg),
            RenderError::Raster(_) => EngineError::new_err(msg),
        }
    }
}

/// Renders pictures of packed boxes from a render input given as JSON text; returns the
/// output (SVG or base64 PNG per box, depth orders) as JSON text. The GIL is released.
#[pyfunction]
fn render_json(py: Python<'_>, input: String) -> Result<String, PyRenderError> {
    Ok(py.detach(move || cartonize_render::render_json(&input))?)
}

/// Packs an engine input given as JSON text and returns the output as JSON text.
/// The GIL is released while the engine runs.
#[pyfunction]
fn pack_json(py: Python<'_>, input: String) -> Result<String, PyCoreError> {
    Ok(py.detach(move || cartonize_core::pack_json(&input))?)
}

/// Whether JSON text (as `json.loads` accepts it) names a key twice in one object:
/// True, False, or None when the scan cannot tell (the caller then checks the slow way).
/// The GIL is released while it scans.
#[pyfunction]
fn json_repeats_a_key(py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Option<bool>> {
    let text = text.to_str()?;
    Ok(py.detach(|| json_keys::repeats_a_key(text)))
}

/// A pack answer's body text and canonical text in one pass (`json_text.rs`): as
/// `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes it, and with
/// `sort_keys=True, allow_nan=False` and the top-level keys in `skip` left out. None when
/// `value` holds anything but exact JSON types, or a float that is not finite.
#[pyfunction]
fn json_texts(value: &Bound<'_, PyAny>, skip: Vec<String>) -> Option<(String, String)> {
    json_text::texts(value, &skip)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pack_json, m)?)?;
    m.add_function(wrap_pyfunction!(render_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_repeats_a_key, m)?)?;
    m.add_function(wrap_pyfunction!(json_texts, m)?)?;
    m.add("__version__", cartonize_core::VERSION)?;
    m.add("BUILT", env!("CARTONIZE_BUILT"))?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("DecodeError", m.py().get_type::<DecodeError>())?;
    m.add("InvalidInput", m.py().get_type::<InvalidInput>())?;
    Ok(())
}
