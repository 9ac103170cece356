"""chainrt's HTML reports: ``chainrt report MODEL`` (analysis, simulation and a real run of one
model side by side; model_report.py) and the building blocks the benchmark pages share (html.py)."""
