pub mod stub {}
