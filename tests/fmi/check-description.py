#!/usr/bin/python3
"""check-description.py DIR: an unpacked FMU against FMI 3.0's required
structure (fmi3ModelDescription.xsd and its rules in the standard):
the root's required attributes, the interface elements and their binary,
variables with unique names and value references, exactly one independent
variable, derivatives of continuous states, a model structure whose
elements name existing variables of the right kind, in the standard's
order, and every fmi3 function of the interfaces exported."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

REQUIRED_FUNCTIONS = """fmi3GetVersion fmi3SetDebugLogging fmi3InstantiateModelExchange
fmi3InstantiateCoSimulation fmi3InstantiateScheduledExecution fmi3FreeInstance
fmi3EnterInitializationMode fmi3ExitInitializationMode fmi3EnterEventMode fmi3Terminate
fmi3Reset fmi3GetFloat32 fmi3GetFloat64 fmi3GetInt8 fmi3GetUInt8 fmi3GetInt16 fmi3GetUInt16
fmi3GetInt32 fmi3GetUInt32 fmi3GetInt64 fmi3GetUInt64 fmi3GetBoolean fmi3GetString
fmi3GetBinary fmi3GetClock fmi3SetFloat32 fmi3SetFloat64 fmi3SetInt8 fmi3SetUInt8
fmi3SetInt16 fmi3SetUInt16 fmi3SetInt32 fmi3SetUInt32 fmi3SetInt64 fmi3SetUInt64
fmi3SetBoolean fmi3SetString fmi3SetBinary fmi3SetClock fmi3GetNumberOfVariableDependencies
fmi3GetVariableDependencies fmi3GetFMUState fmi3SetFMUState fmi3FreeFMUState
fmi3SerializedFMUStateSize fmi3SerializeFMUState fmi3DeserializeFMUState
fmi3GetDirectionalDerivative fmi3GetAdjointDerivative fmi3EnterConfigurationMode
fmi3ExitConfigurationMode fmi3GetIntervalDecimal fmi3GetIntervalFraction
fmi3GetShiftDecimal fmi3GetShiftFraction fmi3SetIntervalDecimal fmi3SetIntervalFraction
fmi3SetShiftDecimal fmi3SetShiftFraction fmi3EvaluateDiscreteStates
fmi3UpdateDiscreteStates fmi3EnterContinuousTimeMode fmi3CompletedIntegratorStep
fmi3SetTime fmi3SetContinuousStates fmi3GetContinuousStateDerivatives
fmi3GetEventIndicators fmi3GetContinuousStates fmi3GetNominalsOfContinuousStates
fmi3GetNumberOfEventIndicators fmi3GetNumberOfContinuousStates fmi3EnterStepMode
fmi3GetOutputDerivatives fmi3DoStep fmi3ActivateModelPartition""".split()

CAUSALITIES = {"parameter", "calculatedParameter", "input", "output", "local", "independent",
               "structuralParameter"}
VARIABILITIES = {"constant", "fixed", "tunable", "discrete", "continuous"}


def fail(message):
    print("check-description: " + message)
    sys.exit(1)


def main():
    root_dir = sys.argv[1]
    root = ET.parse(os.path.join(root_dir, "modelDescription.xml")).getroot()
    if root.tag != "fmiModelDescription":
        fail("the root element is " + root.tag)
    for attr in ("fmiVersion", "modelName", "instantiationToken"):
        if not root.get(attr):
            fail("fmiModelDescription has no " + attr)
    if not root.get("fmiVersion").startswith("3."):
        fail("fmiVersion is " + root.get("fmiVersion"))
    interfaces = [e for e in root if e.tag in ("ModelExchange", "CoSimulation", "ScheduledExecution")]
    if not interfaces:
        fail("no interface element")
    for e in interfaces:
        ident = e.get("modelIdentifier")
        if not ident:
            fail(e.tag + " has no modelIdentifier")
        binary = os.path.join(root_dir, "binaries", "x86_64-linux", ident + ".so")
        if not os.path.isfile(binary):
            fail("no binary " + binary)
        listing = subprocess.run(["nm", "-D", "--defined-only", binary], capture_output=True,
                                 text=True, check=True).stdout
        exported = set(line.split()[-1] for line in listing.splitlines() if line.strip())
        missing = [f for f in REQUIRED_FUNCTIONS if f not in exported]
        if missing:
            fail("the binary does not export " + ", ".join(missing))
        extra = [s for s in exported if not s.startswith("fmi3")]
        if extra:
            fail("the binary exports more than the fmi3 functions: " + ", ".join(sorted(extra)[:5]))
    order = [e.tag for e in root]
    expected = ["fmiModelDescription"]
    known = ["ModelExchange", "CoSimulation", "ScheduledExecution", "UnitDefinitions",
             "TypeDefinitions", "LogCategories", "DefaultExperiment", "VendorAnnotations",
             "ModelVariables", "ModelStructure"]
    positions = [known.index(t) for t in order if t in known]
    if positions != sorted(positions) or "ModelVariables" not in order or "ModelStructure" not in order:
        fail("elements out of the standard's order: " + ", ".join(order))
    variables = root.find("ModelVariables")
    by_vr, names = {}, set()
    independent = 0
    for v in variables:
        name, vr = v.get("name"), v.get("valueReference")
        if not name or vr is None:
            fail("a variable without name or valueReference")
        if name in names:
            fail("two variables are named " + name)
        if vr in by_vr:
            fail("two variables have value reference " + vr)
        names.add(name)
        by_vr[vr] = v
        causality = v.get("causality", "local")
        variability = v.get("variability", "continuous")
        if causality not in CAUSALITIES or variability not in VARIABILITIES:
            fail("variable %s: causality %s, variability %s" % (name, causality, variability))
        if causality == "independent":
            independent += 1
            if v.get("start") is not None:
                fail("the independent variable has a start value")
        if causality in ("parameter", "input") and v.get("start") is None:
            fail("%s %s has no start value" % (causality, name))
        if causality == "parameter" and variability not in ("fixed", "tunable"):
            fail("parameter %s is %s" % (name, variability))
    if independent != 1:
        fail("%d independent variables" % independent)
    structure = root.find("ModelStructure")
    tags = [e.tag for e in structure]
    rank = {"Output": 0, "ContinuousStateDerivative": 1, "ClockedState": 2, "InitialUnknown": 3,
            "EventIndicator": 4}
    if [rank[t] for t in tags] != sorted(rank[t] for t in tags):
        fail("ModelStructure elements out of order")
    for e in structure:
        v = by_vr.get(e.get("valueReference"))
        if v is None:
            fail("%s names no variable (%s)" % (e.tag, e.get("valueReference")))
        if e.tag == "Output" and v.get("causality") != "output":
            fail("Output %s is not an output" % v.get("name"))
        if e.tag == "ContinuousStateDerivative":
            state = by_vr.get(v.get("derivative"))
            if state is None or state.get("variability", "continuous") != "continuous":
                fail("derivative %s of no continuous variable" % v.get("name"))
    outputs = [v.get("valueReference") for v in variables if v.get("causality") == "output"]
    if outputs != [e.get("valueReference") for e in structure if e.tag == "Output"]:
        fail("ModelStructure does not list every output, in order")
    print("check-description: %s: %d variables, %d states, %d event indicators" % (
        root.get("modelName"), len(by_vr), tags.count("ContinuousStateDerivative"),
        tags.count("EventIndicator")))


main()
