"""The IR attribute names convc's passes write and read, in one place.

Each pass records its decision on the `flow.executable` it concerns, so that any pass can run
alone on a file (`convc-opt`): the matcher writes the problem or a decline, the planner the
schedule, the lowering the kernel symbol, the splice reads them all.
"""

PROBLEM_ATTR = "convc.problem"          # ConvProblem as a DictAttr (convc-match-conv)
DECLINE_ATTR = "convc.decline"          # why a conv dispatch stays with IREE
CONSTANTS_ATTR = "convc.constants"      # hoisted dense constants: kernel operands after the dispatch's
SCHEDULE_ATTR = "convc.schedule"        # Schedule as a DictAttr (convc-plan-schedule)
KERNEL_ATTR = "convc.kernel"            # the hal.executable.source symbol (convc-lower-kernel)
GROUPED_CONV_ATTR = "convc.grouped_conv"  # the grouped generics convc-channels-last makes
COPY_ATTR = "convc.copy"                # CopyProblem as a DictAttr (convc-copy-chains)
