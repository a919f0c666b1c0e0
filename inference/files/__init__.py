"""The files users bring and get back: report files read strictly, results and report.html written, JSON that keeps
NaN readable."""
