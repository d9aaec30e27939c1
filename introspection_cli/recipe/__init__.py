"""Recipe packages: loading with source positions, the validation rules, discovery."""
