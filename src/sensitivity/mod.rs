pub mod bderivative;
