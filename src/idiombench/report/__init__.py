"""Report: tables (CSV, Markdown, LaTeX) and one PDF with a section per scored benchmark."""
