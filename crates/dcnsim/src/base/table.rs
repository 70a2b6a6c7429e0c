//! Named column tables: what a run hands to Python (and what is written as CSV there).

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Integers some of which are missing (`None`: unknown or unlimited), handed to
    /// Python as `None` and written as an empty CSV cell, never as a sentinel number.
    OptI64(Vec<Option<i64>>),
    Str(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::OptI64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn new(name: &str) -> Table {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    pub fn f64(&mut self, name: &str, v: Vec<f64>) -> &mut Self {
        self.columns.push((name.to_string(), Column::F64(v)));
        self
    }
    pub fn i64(&mut self, name: &str, v: Vec<i64>) -> &mut Self {
        self.columns.push((name.to_string(), Column::I64(v)));
        self
    }
    pub fn opt_i64(&mut self, name: &str, v: Vec<Option<i64>>) -> &mut Self {
        self.columns.push((name.to_string(), Column::OptI64(v)));
        self
    }
    pub fn str(&mut self, name: &str, v: Vec<String>) -> &mut Self {
        self.columns.push((name.to_string(), Column::Str(v)));
        self
    }
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn get_f64(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            Column::F64(v) => v.first().copied(),
            Column::I64(v) => v.first().map(|x| *x as f64),
            Column::OptI64(v) => v.first().copied().flatten().map(|x| x as f64),
            Column::Str(_) => None,
        }
    }
}
