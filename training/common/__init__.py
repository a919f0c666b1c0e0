"""What the recipes share: arguments, rank helpers, the run lifecycle and run directory, encoder loading,
throughput logging, the evaluation hook and logging."""
