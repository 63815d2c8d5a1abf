//! XProf's DataTable JSON (the Google Charts table shape its op tools answer with):
//! `{"cols":[{"id","label","type"}...],"p":{name:"text"...},"rows":[{"c":[{"v":value}...]}...]}`.
//! Numbers are doubles (`1.0`, shortest round-trip form); every `p` value is a string, and a table
//! without properties has no `p` (as XProf prints kernel and HLO op stats). A column has its own `p`
//! only when given properties (the step table's tooltip column: `{"role":"tooltip"}`).

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Number,
    String,
    Boolean,
}

impl ColumnType {
    fn name(self) -> &'static str {
        match self {
            ColumnType::Number => "number",
            ColumnType::String => "string",
            ColumnType::Boolean => "boolean",
        }
    }
}

/// A DataTable being filled row by row. It prints itself ([`Serialize`]) rather than through a
/// `serde_json::Value`: as a `Value`, each cell `{"v": …}` is a map of its own (a B-tree node of some
/// 600 bytes), and building them was 40% of `tidemark framework-op-stats --json` on a TF trace.
#[derive(Debug, Clone, Default)]
pub struct DataTable {
    cols: Vec<Column>,
    /// Table-level properties, by name (XProf prints them sorted).
    properties: BTreeMap<String, String>,
    rows: Vec<Vec<OwnedCell>>,
}

#[derive(Debug, Clone)]
struct Column {
    id: String,
    label: String,
    column_type: ColumnType,
    /// The column's own properties, by name.
    properties: BTreeMap<String, String>,
}

/// One cell's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Number(f64),
    Text(&'a str),
    Boolean(bool),
}

/// A cell as the table keeps it.
#[derive(Debug, Clone)]
enum OwnedCell {
    Number(f64),
    Text(Box<str>),
    Boolean(bool),
    /// A cell already in XProf's JSON form (`{"v": …}`, [`DataTable::raw_row`]).
    Raw(Value),
}

impl DataTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn column(&mut self, id: &str, column_type: ColumnType, label: &str) {
        self.cols.push(Column { id: id.into(), label: label.into(), column_type, properties: BTreeMap::new() });
    }

    /// Gives the column `id` (added before) a property in its own `p`.
    pub fn column_property(&mut self, id: &str, key: &str, value: &str) {
        if let Some(col) = self.cols.iter_mut().find(|c| c.id == id) {
            col.properties.insert(key.into(), value.into());
        }
    }

    /// A table-level property (`p`); XProf keeps them sorted by name.
    pub fn property(&mut self, name: &str, value: impl Into<String>) {
        self.properties.insert(name.to_string(), value.into());
    }

    pub fn row<'a>(&mut self, cells: impl IntoIterator<Item = Cell<'a>>) {
        let row = cells
            .into_iter()
            .map(|cell| match cell {
                Cell::Number(v) => OwnedCell::Number(v),
                Cell::Text(s) => OwnedCell::Text(s.into()),
                Cell::Boolean(b) => OwnedCell::Boolean(b),
            })
            .collect();
        self.rows.push(row);
    }

    /// Appends a row of cells already in XProf's JSON form (`{"v": …}`).
    pub fn raw_row(&mut self, cells: Vec<Value>) {
        self.rows.push(cells.into_iter().map(OwnedCell::Raw).collect());
    }

    /// The table as a JSON value (for a caller that nests it in a value of its own).
    pub fn into_json(self) -> Value {
        serde_json::to_value(&self).unwrap_or(Value::Null)
    }

    /// A table with `columns` (id, type, label), in order.
    pub fn with_columns(columns: &[(&str, ColumnType, &str)]) -> Self {
        let mut t = Self::new();
        for &(id, column_type, label) in columns {
            t.column(id, column_type, label);
        }
        t
    }
}

/// `{"cols":[…],"p":{…},"rows":[…]}`, keys in the sorted order a JSON object of `serde_json` prints
/// them in; no `p` without properties.
impl Serialize for DataTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("cols", &self.cols)?;
        if !self.properties.is_empty() {
            m.serialize_entry("p", &self.properties)?;
        }
        m.serialize_entry("rows", &Rows(&self.rows))?;
        m.end()
    }
}

impl Serialize for Column {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("label", &self.label)?;
        if !self.properties.is_empty() {
            m.serialize_entry("p", &self.properties)?;
        }
        m.serialize_entry("type", self.column_type.name())?;
        m.end()
    }
}

/// The rows, each `{"c":[{"v":…}…]}`.
struct Rows<'a>(&'a [Vec<OwnedCell>]);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for row in self.0 {
            seq.serialize_element(&Row(row))?;
        }
        seq.end()
    }
}

struct Row<'a>(&'a [OwnedCell]);

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(1))?;
        m.serialize_entry("c", self.0)?;
        m.end()
    }
}

impl Serialize for OwnedCell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            // A non-finite number prints as `null`, as a `serde_json::Value` of it does.
            OwnedCell::Number(v) => value_cell(serializer, v),
            OwnedCell::Text(s) => value_cell(serializer, s),
            OwnedCell::Boolean(b) => value_cell(serializer, b),
            OwnedCell::Raw(v) => v.serialize(serializer),
        }
    }
}

/// `{"v": value}`.
fn value_cell<S: Serializer>(serializer: S, value: &impl Serialize) -> Result<S::Ok, S::Error> {
    let mut m = serializer.serialize_map(Some(1))?;
    m.serialize_entry("v", value)?;
    m.end()
}

/// XProf's diagnostics table: one `WARNING` row per warning.
pub fn warnings_table(warnings: &[String]) -> DataTable {
    let mut t = DataTable::with_columns(&[("severity", ColumnType::String, "Severity"), ("message", ColumnType::String, "Message")]);
    for w in warnings {
        t.row([Cell::Text("WARNING"), Cell::Text(w)]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_xprof_does() {
        let mut t = DataTable::new();
        t.column("rank", ColumnType::Number, "Rank");
        t.column("name", ColumnType::String, "Name");
        t.column_property("name", "role", "tooltip");
        t.property("task_type", "Training");
        t.row([Cell::Number(1.0), Cell::Text("a")]);
        t.row([Cell::Number(0.6293046038264677), Cell::Text("")]);
        t.row([Cell::Number(f64::NAN), Cell::Text("b")]);
        let direct = serde_json::to_string_pretty(&t).unwrap();
        assert_eq!(direct, serde_json::to_string_pretty(&t.clone().into_json()).unwrap());
        assert_eq!(
            serde_json::to_string(&t.into_json()).unwrap(),
            r#"{"cols":[{"id":"rank","label":"Rank","type":"number"},{"id":"name","label":"Name","p":{"role":"tooltip"},"type":"string"}],"p":{"task_type":"Training"},"rows":[{"c":[{"v":1.0},{"v":"a"}]},{"c":[{"v":0.6293046038264677},{"v":""}]},{"c":[{"v":null},{"v":"b"}]}]}"#
        );
    }
}
