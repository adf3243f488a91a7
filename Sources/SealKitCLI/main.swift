print("sealkit")
