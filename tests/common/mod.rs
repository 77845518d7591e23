pub mod simple_rules;
