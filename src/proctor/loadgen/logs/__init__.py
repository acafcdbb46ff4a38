"""loadgen/logs"""
