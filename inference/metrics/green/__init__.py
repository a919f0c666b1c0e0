"""GREEN: prompt and response format, generation, the metric and the clustered summary."""
