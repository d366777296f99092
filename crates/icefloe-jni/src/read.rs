//! Executor-side reading: a task group's payload read by the core's reader, its batches
//! handed to Java through the Arrow C Data Interface (an `ArrowArrayStream` Java allocated
//! and imports with `org.apache.arrow.c.Data.importArrayStream`).

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use icefloe::arrow::spark::to_spark_batch;
use icefloe::read::{read_task_group, PlanReader, ReadOptions};
use icefloe::{Error, FileIO, Schema};
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};
use serde_json::Value;

use crate::catalog::{parse_json, string};
use crate::errors::{Outcome, ThrowIcefloe};
use crate::stats::OpenReader;

/// The FileIO for a table location on an executor, from the properties the driver's catalog
/// gave for it (none for local files).
pub(crate) fn executor_io(location: &str, properties: Option<&Value>) -> Outcome<Arc<dyn FileIO>> {
    let mut map = std::collections::HashMap::new();
    if let Some(Value::Object(o)) = properties {
        for (k, v) in o {
            if let Some(s) = v.as_str() {
                map.insert(k.clone(), s.to_string());
            }
        }
    }
    Ok(icefloe::io::for_location(location, &map)?)
}

/// The core's reader of one task group (`icefloe::read::read_task_group`), its batches
/// converted to the Arrow types Spark reads (`icefloe::arrow::spark`).
struct SparkBatches {
    inner: PlanReader,
    schema: Schema,
    arrow_schema: SchemaRef,
    // counted open until the stream's release drops this reader (crate::stats)
    open: OpenReader,
}

impl Iterator for SparkBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.inner.next()? {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        self.open.batch(batch.num_rows());
        Some(
            to_spark_batch(&batch, &self.schema)
                // the error's text is the core error's (file and field named)
                .map_err(|e| ArrowError::ExternalError(Box::new(e))),
        )
    }
}

impl RecordBatchReader for SparkBatches {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.arrow_schema)
    }
}

/// The schema of the batches Spark gets: the reader's, with uuid and fixed converted.
fn spark_schema(reader_schema: &SchemaRef, schema: &Schema) -> Outcome<SchemaRef> {
    let empty = RecordBatch::new_empty(Arc::clone(reader_schema));
    Ok(to_spark_batch(&empty, schema)?.schema())
}

fn open_reader(
    payload: &[u8],
    io: Arc<dyn FileIO>,
    schema: &Value,
    options: ReadOptions,
) -> Outcome<Box<dyn RecordBatchReader + Send>> {
    let schema = Schema::from_json(schema, "read schema")?;
    let inner = read_task_group(payload, io, options)?;
    let arrow_schema = spark_schema(&inner.schema(), &schema)?;
    Ok(Box::new(SparkBatches {
        inner,
        schema,
        arrow_schema,
        open: OpenReader::new(),
    }))
}

fn optional_string(env: &Env<'_>, s: &JString<'_>) -> Outcome<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(string(env, s)?))
}

#[no_mangle]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_readerOpen<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    payload: JByteArray<'local>,
    location: JString<'local>,
    io_properties: JString<'local>,
    schema: JString<'local>,
    stream_address: jlong,
) {
    env.with_env(|env| -> Outcome<()> {
        if stream_address == 0 {
            return Err(Error::invalid_argument("a null ArrowArrayStream address").into());
        }
        let payload = env.convert_byte_array(&payload)?;
        let location = string(env, &location)?;
        let io_properties = optional_string(env, &io_properties)?
            .map(|p| parse_json(&p, "the FileIO properties"))
            .transpose()?;
        let schema = parse_json(&string(env, &schema)?, "the read schema")?;
        let io = executor_io(&location, io_properties.as_ref())?;
        let reader = open_reader(&payload, io, &schema, ReadOptions::default())?;
        let stream = FFI_ArrowArrayStream::new(reader);
        // SAFETY: Java allocated an ArrowArrayStream struct at this address
        // (ArrowArrayStream.allocateNew) and imports it after this call; writing without
        // dropping the old value is right for a freshly allocated (released) struct.
        unsafe { std::ptr::write(stream_address as *mut FFI_ArrowArrayStream, stream) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}

/// [`Java_io_icefloe_spark_jni_Native_readerOpen`] with metadata columns (`_file`, `_pos`,
/// ...: a JSON list of names) after the schema's columns: the row ids of a row-level
/// operation's scan.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_icefloe_spark_jni_Native_readerOpenWithMetadata<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    payload: JByteArray<'local>,
    location: JString<'local>,
    io_properties: JString<'local>,
    schema: JString<'local>,
    metadata_columns: JString<'local>,
    stream_address: jlong,
) {
    env.with_env(|env| -> Outcome<()> {
        if stream_address == 0 {
            return Err(Error::invalid_argument("a null ArrowArrayStream address").into());
        }
        let payload = env.convert_byte_array(&payload)?;
        let location = string(env, &location)?;
        let io_properties = optional_string(env, &io_properties)?
            .map(|p| parse_json(&p, "the FileIO properties"))
            .transpose()?;
        let schema = parse_json(&string(env, &schema)?, "the read schema")?;
        let names = parse_json(&string(env, &metadata_columns)?, "the metadata columns")?;
        let options = ReadOptions {
            metadata_columns: names
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            ..ReadOptions::default()
        };
        let io = executor_io(&location, io_properties.as_ref())?;
        let reader = open_reader(&payload, io, &schema, options)?;
        let stream = FFI_ArrowArrayStream::new(reader);
        // SAFETY: as in readerOpen: Java allocated a released ArrowArrayStream here
        unsafe { std::ptr::write(stream_address as *mut FFI_ArrowArrayStream, stream) };
        Ok(())
    })
    .resolve::<ThrowIcefloe>()
}
