export { AllocationRefusal, allocationOperators, assertPlannedTargetsReceive, planAllocations, type AllocationPlan, type AllocationRequest, type AllocationSource, type AllocationTarget } from './plan.js';
export { planReversal, scaleToCapture, type AllocationBalance, type PlannedAmounts, type ReversalPart } from './reverse.js';
export { allocationJson, type AllocationJson } from './shape.js';
export { grantAllocation, grantedSiteIds, listAllocationGrants, revokeAllocationGrant } from './grants.js';
export { allocationClearingAccount, allocationPostingsOnCompletion, insertPlannedAllocations, loadAllocationFacts, loadAllocationJson, loadPlannedRequests, type CompletedMoney } from './store.js';
export { AllocationInputListSchema, AllocationInputSchema, AllocationOutputSchema, ForexItemSchema, allocationRequestOf, isAllocationInputList, percentTotalRule, type AllocationInputWire } from './wire.js';
