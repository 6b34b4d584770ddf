"""ferry performance analysis: fit T(p) = p/(t0 + t1 p) and rebuild the report.

Modules: stats (OLS/HC1/HC3/t/bootstrap), io_csv (schema-checked loading),
model (fits and invariants), tables/plots (outputs), reproduce (driver),
capacity (node sizing CLI), manifest (CSV sha256 verification).
See analysis/SCHEMA.md for the input contract.
"""
