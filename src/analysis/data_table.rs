//! XProf's DataTable JSON (the Google Charts table shape its op tools answer with):
//! `{"cols":[{"id","label","type"}...],"p":{name:"text"...},"rows":[{"c":[{"v":value}...]}...]}`.
//! Numbers are doubles (`1.0`, shortest round-trip form); every `p` value is a string, and a table
//! without properties has no `p` (as XProf prints kernel and HLO op stats). A column has its own `p`
//! only when given properties (the step table's tooltip column: `{"role":"tooltip"}`).

use serde_json::{json, Map, Value};

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Number,
    String,
    Boolean,
}

/// A DataTable being filled row by row.
#[derive(Debug, Clone, Default)]
pub struct DataTable {
    cols: Vec<Value>,
    properties: Map<String, Value>,
    rows: Vec<Value>,
}

/// One cell's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Number(f64),
    Text(&'a str),
    Boolean(bool),
}

impl DataTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn column(&mut self, id: &str, column_type: ColumnType, label: &str) {
        let t = match column_type {
            ColumnType::Number => "number",
            ColumnType::String => "string",
            ColumnType::Boolean => "boolean",
        };
        self.cols.push(json!({"id": id, "label": label, "type": t}));
    }

    /// Gives the column `id` (added before) a property in its own `p`.
    pub fn column_property(&mut self, id: &str, key: &str, value: &str) {
        if let Some(col) = self.cols.iter_mut().find(|c| c["id"] == id) {
            col["p"][key] = Value::String(value.to_string());
        }
    }

    /// A table-level property (`p`); XProf keeps them sorted by name, as JSON objects here are.
    pub fn property(&mut self, name: &str, value: impl Into<String>) {
        self.properties.insert(name.to_string(), Value::String(value.into()));
    }

    pub fn row<'a>(&mut self, cells: impl IntoIterator<Item = Cell<'a>>) {
        let c: Vec<Value> = cells
            .into_iter()
            .map(|cell| match cell {
                Cell::Number(v) => json!({ "v": v }),
                Cell::Text(s) => json!({ "v": s }),
                Cell::Boolean(b) => json!({ "v": b }),
            })
            .collect();
        self.rows.push(json!({ "c": c }));
    }

    /// Appends a row of cells already in XProf's JSON form (`{"v": …}`).
    pub fn raw_row(&mut self, cells: Vec<Value>) {
        self.rows.push(json!({ "c": cells }));
    }

    pub fn into_json(self) -> Value {
        if self.properties.is_empty() {
            json!({"cols": self.cols, "rows": self.rows})
        } else {
            json!({"cols": self.cols, "p": self.properties, "rows": self.rows})
        }
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
        assert_eq!(
            serde_json::to_string(&t.into_json()).unwrap(),
            r#"{"cols":[{"id":"rank","label":"Rank","type":"number"},{"id":"name","label":"Name","p":{"role":"tooltip"},"type":"string"}],"p":{"task_type":"Training"},"rows":[{"c":[{"v":1.0},{"v":"a"}]},{"c":[{"v":0.6293046038264677},{"v":""}]}]}"#
        );
    }
}
