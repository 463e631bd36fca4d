"""Layer 2, a service: prompt templates (package data) and the rendered prompts table."""
