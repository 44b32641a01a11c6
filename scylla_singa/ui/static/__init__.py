"""The pages' HTML, script and style (package data, served by ui.assets)."""
