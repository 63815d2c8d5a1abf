//! XProf's DataTable JSON (Google Charts' table format), which its tools return:
//! `{"cols":[{"id","label","type"[,"p"]}...],"p":{...},"rows":[{"c":[{"v":...}...]}...]}`. Numbers are
//! doubles (`1.0`), every table property is a string, and `p` is left out when there is none.

use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Default)]
pub struct DataTable {
    cols: Vec<Value>,
    p: Map<String, Value>,
    rows: Vec<Value>,
}

/// One cell.
pub enum Cell {
    Text(String),
    Number(f64),
}

impl DataTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a column (`kind` is "string" or "number").
    pub fn column(&mut self, id: &str, kind: &str, label: &str) -> &mut Self {
        self.cols.push(json!({"id": id, "label": label, "type": kind}));
        self
    }

    /// Adds a column with column properties.
    pub fn column_with(&mut self, id: &str, kind: &str, label: &str, properties: &[(&str, &str)]) -> &mut Self {
        let p: Map<String, Value> = properties.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect();
        self.cols.push(json!({"id": id, "label": label, "type": kind, "p": p}));
        self
    }

    /// Sets a table property.
    pub fn property(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.p.insert(key.to_string(), Value::String(value.into()));
        self
    }

    pub fn row(&mut self, cells: impl IntoIterator<Item = Cell>) -> &mut Self {
        let c: Vec<Value> = cells
            .into_iter()
            .map(|cell| match cell {
                Cell::Text(s) => json!({ "v": s }),
                // A non-finite number has no JSON form; XProf's tables never hold one.
                Cell::Number(x) => json!({ "v": serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number) }),
            })
            .collect();
        self.rows.push(json!({ "c": c }));
        self
    }

    pub fn to_json(&self) -> Value {
        let mut table = Map::new();
        table.insert("cols".into(), Value::Array(self.cols.clone()));
        if !self.p.is_empty() {
            table.insert("p".into(), Value::Object(self.p.clone()));
        }
        table.insert("rows".into(), Value::Array(self.rows.clone()));
        Value::Object(table)
    }
}
