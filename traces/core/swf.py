"""Standard Workload Format (SWF) reader and writer.

CONTRACT (implementation in progress):

    SWF_FIELDS: tuple of the 18 column names, in file order:
        job_id, submit_time, wait_time, run_time, allocated_procs, avg_cpu_time,
        used_memory, requested_procs, requested_time, requested_memory, status,
        user_id, group_id, executable_id, queue_id, partition_id, preceding_job_id,
        think_time
    read_swf(source, *, strict=True, name=None, progress=None) -> SwfTrace
        source: path (str/Path, .swf or .swf.gz) or a binary file object.
    SwfTrace.header: SwfHeader  (max_procs, max_nodes, max_runtime, unix_start_time, ...,
                                 .machine_procs: MaxProcs else MaxNodes else None)
    SwfTrace.jobs: pandas.DataFrame with the 18 columns, sorted by submit_time (stable),
        time columns float64 (seconds, -1 = missing), ids/counts int64.
    SwfTrace.report: IngestReport (counts of oddities, skipped lines)
    write_swf(trace, dest) ; SwfFormatError(file, line, field, value)
"""
