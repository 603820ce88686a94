"""The live-site service layer: backends, sites, jobs and the hold queue, sweep, imports."""
