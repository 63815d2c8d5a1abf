//! XProf's DataTable JSON (Google Charts' table shape), which every op-table tool answers in:
//! `{"cols":[{"id","label","type"}…],"p":{…},"rows":[{"c":[{"v":…}…]}…]}`. Numbers are doubles printed
//! shortest round-trip with `.0` on integral values (serde_json's f64 printing is exactly that);
//! `p` is present only when it has entries, and its values are strings; a column has its own `p` only
//! when given properties (the step table's tooltip column: `{"role":"tooltip"}`).

use serde_json::{json, Map, Value};

/// A column's type as XProf names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Number,
    Text,
    Boolean,
}

impl ColumnType {
    fn name(self) -> &'static str {
        match self {
            ColumnType::Number => "number",
            ColumnType::Text => "string",
            ColumnType::Boolean => "boolean",
        }
    }
}

/// One cell's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Number(f64),
    Text(String),
    Boolean(bool),
}

/// A table being built: columns (id, type, label), properties and rows.
#[derive(Debug, Clone, Default)]
pub struct DataTable {
    columns: Vec<(&'static str, ColumnType, &'static str)>,
    /// (column id, key, value).
    column_properties: Vec<(&'static str, &'static str, &'static str)>,
    properties: Vec<(String, String)>,
    rows: Vec<Vec<Cell>>,
}

impl DataTable {
    pub fn new(columns: &[(&'static str, ColumnType, &'static str)]) -> Self {
        DataTable { columns: columns.to_vec(), ..Self::default() }
    }

    /// Gives column `id` a property.
    pub fn column_property(&mut self, id: &'static str, key: &'static str, value: &'static str) {
        self.column_properties.push((id, key, value));
    }

    pub fn property(&mut self, key: &str, value: impl Into<String>) {
        self.properties.push((key.to_string(), value.into()));
    }

    pub fn push_row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(cells.len(), self.columns.len(), "a row has one cell per column");
        self.rows.push(cells);
    }

    pub fn to_json(&self) -> Value {
        let cols: Vec<Value> = self
            .columns
            .iter()
            .map(|(id, t, label)| {
                let mut col = json!({"id": id, "label": label, "type": t.name()});
                let p: Map<String, Value> =
                    self.column_properties.iter().filter(|(c, _, _)| c == id).map(|(_, k, v)| (k.to_string(), Value::from(*v))).collect();
                if !p.is_empty() {
                    col["p"] = Value::Object(p);
                }
                col
            })
            .collect();
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let c: Vec<Value> = r
                    .iter()
                    .map(|cell| match cell {
                        Cell::Number(x) => json!({ "v": x }),
                        Cell::Text(s) => json!({ "v": s }),
                        Cell::Boolean(b) => json!({ "v": b }),
                    })
                    .collect();
                json!({ "c": c })
            })
            .collect();
        let mut table = Map::new();
        table.insert("cols".into(), Value::Array(cols));
        if !self.properties.is_empty() {
            let p: Map<String, Value> = self.properties.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            table.insert("p".into(), Value::Object(p));
        }
        table.insert("rows".into(), Value::Array(rows));
        Value::Object(table)
    }
}
