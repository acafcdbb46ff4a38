"""suts"""
