// CLI lands with issue 6
